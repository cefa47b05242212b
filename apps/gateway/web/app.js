/**
 * DataAgent's demo UI: sign in with an API key (optional when the gateway runs without
 * authentication), then the chat tab and the MCP servers tab. Served by the gateway at `/`.
 */
import { html, render, useEffect, useRef, useState } from './vendor/preact.js';
import { api, ApiFailure, storedKey, storeKey } from './api.js';
import { ChatStore } from './chat-store.js';
import { ChatTab } from './chat-tab.js';
import { McpTab } from './mcp-tab.js';

const TAB_STORAGE = 'dataagent.tab';
const TABS = [
  { id: 'chat', label: 'Chat' },
  { id: 'mcp', label: 'MCP servers' },
];

/** What a 401 means to the person at the keyboard. */
function authMessage(failure) {
  if (failure.errorCode === 'missing_api_key') return 'This gateway needs an API key: enter yours above and sign in.';
  if (failure.errorCode === 'invalid_api_key') return 'That API key is not valid (it may have been revoked or have expired).';
  return failure.message;
}

function App() {
  const [me, setMe] = useState(null);
  const [authError, setAuthError] = useState(null);
  const [problem, setProblem] = useState(null);
  const [checking, setChecking] = useState(true);
  const [keyInput, setKeyInput] = useState(storedKey());
  const [tab, setTab] = useState(sessionStorage.getItem(TAB_STORAGE) === 'mcp' ? 'mcp' : 'chat');
  const [store, setStore] = useState(null);
  const [, setTick] = useState(0);
  const [mcpChanges, setMcpChanges] = useState(0);
  const frame = useRef(0);
  const current = useRef(null);

  /**
   * One chat connection per sign-in, there as soon as the tabs are (null: signed out). Its
   * changes re-render once per frame at most: text streams in many small events.
   */
  const connect = (who) => {
    current.current?.stop();
    const chat = who
      ? new ChatStore({
          onChange: () => {
            if (frame.current) return;
            frame.current = requestAnimationFrame(() => {
              frame.current = 0;
              setTick((t) => t + 1);
            });
          },
          onUserEvent: (event) => {
            if (event.event_type === 'mcp_config_changed') setMcpChanges((n) => n + 1);
          },
          onAuthFailure: (failure) => {
            connect(null);
            setAuthError(authMessage(failure));
          },
        })
      : null;
    current.current = chat;
    chat?.start();
    setStore(chat);
    setMe(who);
  };

  const signIn = async (key) => {
    storeKey(key);
    setChecking(true);
    try {
      const who = await api('GET', '/me');
      setAuthError(null);
      setProblem(null);
      connect(who);
    } catch (err) {
      connect(null);
      if (err instanceof ApiFailure && err.status === 401) setAuthError(authMessage(err));
      else setProblem(err.message);
    } finally {
      setChecking(false);
    }
  };

  useEffect(() => {
    void signIn(storedKey());
    return () => current.current?.stop();
  }, []);

  const choose = (id) => {
    setTab(id);
    sessionStorage.setItem(TAB_STORAGE, id);
  };
  const onTabKey = (e) => {
    const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
    if (!step) return;
    const next = TABS[(TABS.findIndex((t) => t.id === tab) + step + TABS.length) % TABS.length];
    choose(next.id);
    document.getElementById(`tab-${next.id}`)?.focus();
  };

  return html`
    <header class="topbar">
      <h1 class="brand"><img src="/ui/icon.svg" alt="" width="24" height="24" /> DataAgent</h1>
      ${me &&
      html`<div class="tabs" role="tablist" aria-label="Views" onKeyDown=${onTabKey}>
        ${TABS.map(
          (t) => html`<button
            type="button"
            role="tab"
            id=${`tab-${t.id}`}
            data-testid=${`tab-${t.id}`}
            aria-selected=${tab === t.id ? 'true' : 'false'}
            aria-controls="panel"
            tabindex=${tab === t.id ? '0' : '-1'}
            onClick=${() => choose(t.id)}
          >
            ${t.label}
          </button>`,
        )}
      </div>`}
      <form class="account" onSubmit=${(e) => (e.preventDefault(), signIn(keyInput.trim()))}>
        <label for="api-key" class="visually-hidden">API key</label>
        <input
          id="api-key"
          data-testid="api-key"
          type="password"
          autocomplete="off"
          placeholder=${me?.auth_disabled ? 'API key (optional)' : 'API key'}
          value=${keyInput}
          onInput=${(e) => setKeyInput(e.currentTarget.value)}
        />
        <button type="submit" data-testid="sign-in" disabled=${checking}>Sign in</button>
        ${me && html`<span class="who" data-testid="signed-in-as" title=${`role: ${me.role}`}>${me.auth_disabled ? 'local' : `${me.tenant_id}/${me.user_id}`}</span>`}
      </form>
    </header>
    <main>
      ${authError && html`<p class="auth-error" data-testid="auth-error" role="alert">${authError}</p>`}
      ${problem && html`<p class="banner" role="alert">${problem}</p>`}
      ${me &&
      html`<div id="panel" class="panel" role="tabpanel" aria-labelledby=${`tab-${tab}`}>
        ${store && tab === 'chat' && html`<${ChatTab} store=${store} />`}
        ${tab === 'mcp' && html`<${McpTab} me=${me} changes=${mcpChanges} />`}
      </div>`}
      ${!me && !checking && html`<section class="welcome"><h2>Sign in</h2><p>Enter your DataAgent API key above. It stays in this browser (localStorage) and is sent only to this gateway.</p></section>`}
    </main>
  `;
}

render(html`<${App} />`, document.getElementById('app'));
