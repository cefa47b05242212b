/** The chat tab: sessions sidebar, the conversation, the message box, and the dialogs of approvals and of MCP servers' questions. */
import { html, useEffect, useRef, useState } from './vendor/preact.js';
import { ElicitationDialog } from './elicitation-dialog.js';
import { HitlDialog } from './hitl-dialog.js';
import { Turn } from './turn.js';

export function ChatTab({ store }) {
  return html`
    <div class="chat">
      <${Sidebar} store=${store} />
      <section class="conversation" aria-label="Conversation">
        ${store.connectionError && html`<p class="banner" role="status">${store.connectionError}</p>`}
        ${!store.connectionError && store.wasConnected && !store.connected && html`<p class="banner" role="status">Connection lost; reconnecting…</p>`}
        <${Messages} store=${store} />
        <${Composer} store=${store} />
      </section>
      <${HitlDialog} store=${store} />
      <${ElicitationDialog} store=${store} />
    </div>
  `;
}

function Sidebar({ store }) {
  const [problem, setProblem] = useState(null);
  const act = (work) => work().then(() => setProblem(null), (err) => setProblem(err.message));
  const rename = (session) => {
    const title = window.prompt('New name for this chat', session.title || '');
    if (title === null || !title.trim()) return;
    act(() => store.rename(session.session_id, title.trim()));
  };
  return html`
    <nav class="sidebar" aria-label="Chats">
      <button type="button" class="new-chat" data-testid="new-chat" onClick=${() => store.newChat()}>New chat</button>
      ${(problem || store.sessionsError) && html`<p class="banner" role="alert">${problem || store.sessionsError}</p>`}
      <ul class="session-list" data-testid="session-list">
        ${store.sessions.map((session) => {
          const current = session.session_id === store.sessionId;
          const title = session.title || 'Untitled chat';
          return html`
            <li key=${session.session_id} class=${current ? 'session current' : 'session'} data-testid="session-item" data-session-id=${session.session_id}>
              <button type="button" class="session-open" aria-current=${current ? 'page' : undefined} onClick=${() => store.openSession(session.session_id)}>
                <span class="session-title">${title}</span>
              </button>
              <button type="button" class="icon-button" data-icon="rename" data-testid="session-rename" aria-label=${`Rename ${title}`} title="Rename" onClick=${() => rename(session)}></button>
              <button type="button" class="icon-button" data-icon="delete" data-testid="session-delete" aria-label=${`Delete ${title}`} title="Delete" onClick=${() => act(() => store.remove(session.session_id))}></button>
            </li>
          `;
        })}
      </ul>
      ${store.sessions.length === 0 && !store.sessionsError && html`<p class="hint">No chats yet.</p>`}
    </nav>
  `;
}

function Messages({ store }) {
  const list = useRef(null);
  const pinned = useRef(true);
  const items = store.items();
  const { history } = store;
  // Follows the stream while the reader is at the bottom; leaves them be when they scrolled up.
  useEffect(() => {
    const el = list.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  });
  const onScroll = () => {
    const el = list.current;
    pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  };
  const streaming = store.streamingTurn() !== null;
  return html`
    <div class="messages" data-testid="messages" ref=${list} onScroll=${onScroll} role="log" aria-busy=${streaming ? 'true' : 'false'} tabindex="0">
      ${history.offset > 0 &&
      html`<button type="button" class="load-more" data-testid="load-more-history" disabled=${history.loading} onClick=${() => store.loadOlder()}>
        Load older messages (${history.offset} more)
      </button>`}
      ${history.error && html`<p class="banner" role="alert">${history.error}</p>`}
      ${items.length === 0 && !history.loading && html`<p class="empty">Ask DataAgent anything. Tool calls, approvals and file changes show up here as they happen.</p>`}
      ${items.map((item) => {
        if (item.kind === 'user') return html`<div key=${item.key} class="msg user" data-testid="user-message">${item.text}</div>`;
        if (item.kind === 'failure') return html`<${Refusal} key=${item.key} store=${store} entry=${item.entry} />`;
        return html`<${Turn} key=${item.key} turn=${item.turn} onRetry=${() => store.retryRun(item.turn)} />`;
      })}
    </div>
  `;
}

/** A message the gateway refused (rate limit, capacity, validation), with retry when it may work. */
function Refusal({ store, entry }) {
  const { failure } = entry;
  return html`
    <div class="error-notice" data-testid="error-notice" role="alert">
      <p>${failure.message}</p>
      ${failure.retryable && html`<button type="button" data-testid="retry" onClick=${() => store.retry(entry)}>Retry</button>`}
    </div>
  `;
}

function Composer({ store }) {
  const [text, setText] = useState('');
  const input = useRef(null);
  const streaming = store.streamingTurn() !== null;
  const canSend = text.trim().length > 0 && !streaming;
  const submit = () => {
    if (!canSend) return;
    void store.send(text.trim());
    setText('');
  };
  const onKeyDown = (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      submit();
    }
  };
  // A new chat or another session: the cursor goes where the person will type.
  useEffect(() => input.current?.focus(), [store.sessionId]);
  // A run that ends disables Stop. Whoever pressed it (or lost the focus to the page meanwhile)
  // is put back in the message box rather than nowhere; a focus elsewhere stays where it is.
  const stop = useRef(null);
  const wasStreaming = useRef(streaming);
  useEffect(() => {
    const active = document.activeElement;
    if (wasStreaming.current && !streaming && (!active || active === document.body || active === stop.current)) input.current?.focus();
    wasStreaming.current = streaming;
  }, [streaming]);
  return html`
    <form class="composer" onSubmit=${(e) => (e.preventDefault(), submit())}>
      <label for="message-input" class="visually-hidden">Message</label>
      <textarea
        id="message-input"
        ref=${input}
        data-testid="message-input"
        rows="2"
        placeholder="Message DataAgent (Enter sends, Shift+Enter adds a line)"
        value=${text}
        onInput=${(e) => setText(e.currentTarget.value)}
        onKeyDown=${onKeyDown}
      ></textarea>
      <div class="composer-actions">
        <button type="submit" class="primary" data-testid="send" disabled=${!canSend}>Send</button>
        <button type="button" ref=${stop} data-testid="stop" disabled=${!streaming} onClick=${() => store.cancel()}>Stop</button>
      </div>
    </form>
  `;
}
