/**
 * The MCP tab (Req 36): the user's servers with their status, a form to add one (filled by hand
 * or from a Claude Desktop style example), adding every server of a pasted configuration at once
 * (the gateway reads it and answers per server), delete. Changes made anywhere arrive as
 * mcp_config_changed (`changes` counts them); statuses, which workers report, are re-read
 * every few seconds while the tab is open.
 */
import { html, useEffect, useState } from './vendor/preact.js';
import { api, ApiFailure } from './api.js';
import { emptyForm, formToServer, FormInputError, parseExample, pasteOutcome, readPastedConfig } from './mcp-form.js';

const STATUS_REFRESH_MS = 5_000;

const EXAMPLE = JSON.stringify(
  {
    mcpServers: {
      git: { command: 'mcp-server-git', args: ['--repository', '/srv/repo'], env: { GIT_TOKEN: 'your token' } },
      github: { url: 'https://api.githubcopilot.com/mcp/', headers: { Authorization: 'Bearer ghp_your_token' } },
    },
  },
  null,
  2,
);

export function McpTab({ me, changes }) {
  const base = `/users/${encodeURIComponent(me.user_id)}/mcp-servers`;
  const [listing, setListing] = useState({ loaded: false, absent: false, error: null, servers: [], globals: [], max: null });
  const [problem, setProblem] = useState(null);

  const load = async () => {
    try {
      const body = await api('GET', base);
      setListing({ loaded: true, absent: false, error: null, servers: body.servers ?? [], globals: body.global_servers ?? [], max: body.max_servers ?? null });
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 404) setListing((l) => ({ ...l, loaded: true, absent: true }));
      else setListing((l) => ({ ...l, loaded: true, error: err.message }));
    }
  };
  useEffect(() => {
    void load();
  }, [changes, base]);
  useEffect(() => {
    if (listing.absent) return undefined;
    const timer = setInterval(() => void load(), STATUS_REFRESH_MS);
    return () => clearInterval(timer);
  }, [base, listing.absent]);

  const remove = async (name) => {
    try {
      await api('DELETE', `${base}/${encodeURIComponent(name)}`);
      setProblem(null);
    } catch (err) {
      setProblem(err.message);
    }
    await load();
  };

  // The sign-in happens in this browser tab: the authorization server sends it back to the
  // gateway's callback, whose page links back here (the MCP tab is remembered).
  const signIn = async (name) => {
    try {
      const { authorize_url: url } = await api('POST', `${base}/${encodeURIComponent(name)}/authorize`);
      window.location.assign(url);
    } catch (err) {
      setProblem(err.message);
    }
  };
  const signOut = async (name) => {
    try {
      await api('DELETE', `${base}/${encodeURIComponent(name)}/authorize`);
      setProblem(null);
    } catch (err) {
      setProblem(err.message);
    }
    await load();
  };

  if (listing.absent) {
    return html`
      <section class="mcp" aria-labelledby="mcp-heading">
        <h2 id="mcp-heading">Your MCP servers</h2>
        <p class="notice" data-testid="mcp-notice" role="status">
          This gateway does not offer MCP server settings yet, so there is nothing to configure here. Chats work as before
          with the tools the operator set up.
        </p>
      </section>
    `;
  }
  return html`
    <section class="mcp" aria-labelledby="mcp-heading">
      <div class="mcp-servers">
        <h2 id="mcp-heading">Your MCP servers</h2>
        ${listing.max !== null && html`<p class="hint">${listing.servers.length} of ${listing.max} used. A change applies from your next message.</p>`}
        ${(listing.error || problem) && html`<p class="banner" role="alert">${listing.error || problem}</p>`}
        <ul class="mcp-list" data-testid="mcp-list">
          ${listing.servers.map(
            (server) =>
              html`<${ServerItem} key=${server.name} server=${server} onDelete=${() => remove(server.name)} onSignIn=${() => signIn(server.name)} onSignOut=${() => signOut(server.name)} />`,
          )}
        </ul>
        ${listing.loaded && listing.servers.length === 0 && html`<p class="hint">No servers of your own yet: add one below.</p>`}
        ${listing.globals.length > 0 &&
        html`
          <h3>From the operator</h3>
          <ul class="mcp-list">
            ${listing.globals.map(
              (server) => html`<li key=${server.name} class="mcp-item" data-testid="mcp-global-server" data-name=${server.name} data-status=${server.status ?? 'unknown'}>
                <span class=${`dot status-${server.status ?? 'unknown'}`} aria-hidden="true"></span>
                <strong>${server.name}</strong>
                <span class="badge">${server.status ?? 'unknown'}</span>
              </li>`,
            )}
          </ul>
        `}
      </div>
      <${AddServer} base=${base} onAdded=${load} />
    </section>
  `;
}

function ServerItem({ server, onDelete, onSignIn, onSignOut }) {
  const status = server.status ?? 'unknown';
  const remote = server.transport !== 'stdio';
  const target = server.url ?? [server.command, ...(server.args ?? [])].filter(Boolean).join(' ');
  return html`
    <li class="mcp-item" data-testid="mcp-server" data-name=${server.name} data-status=${status}>
      <div class="mcp-item-head">
        <span class=${`dot status-${status}`} aria-hidden="true"></span>
        <strong>${server.name}</strong>
        <span class="badge" data-testid="mcp-status">${status}</span>
        ${typeof server.tool_count === 'number' && html`<span class="hint">${server.tool_count} tools</span>`}
        ${remote && server.signed_in && html`<span class="badge" data-testid="mcp-signed-in">Signed in</span>`}
        ${remote && (status === 'needs_authorization' || (server.signed_in === false && server.authorize_url)) &&
        html`<button type="button" data-testid="mcp-sign-in" aria-label=${`Sign in to ${server.name}`} onClick=${onSignIn}>Sign in</button>`}
        ${remote && server.signed_in && html`<button type="button" data-testid="mcp-sign-out" aria-label=${`Sign out of ${server.name}`} onClick=${onSignOut}>Sign out</button>`}
        <button type="button" class="danger" data-testid="mcp-delete" aria-label=${`Delete ${server.name}`} onClick=${onDelete}>Delete</button>
      </div>
      <p class="mcp-target"><span class="hint">${server.transport}</span> <code>${target}</code></p>
      ${server.description && html`<p class="hint">${server.description}</p>`}
      ${server.last_error && html`<p class="mcp-last-error" data-testid="mcp-last-error">${server.last_error}</p>`}
    </li>
  `;
}

function AddServer({ base, onAdded }) {
  const [form, setForm] = useState(emptyForm());
  const [example, setExample] = useState(EXAMPLE);
  const [errors, setErrors] = useState([]);
  const [note, setNote] = useState(null);
  const [busy, setBusy] = useState(false);
  const field = (name) => ({ value: form[name], onInput: (e) => setForm({ ...form, [name]: e.currentTarget.value }) });

  const fillFromExample = () => {
    try {
      const { form: parsed, names } = parseExample(example);
      setForm(parsed);
      setErrors([]);
      setNote(names.length > 1 ? `Filled in ${names[0]}; the example also has ${names.slice(1).join(', ')}: fill and add them one at a time, or add them all at once.` : `Filled in ${names[0]}.`);
    } catch (err) {
      if (!(err instanceof FormInputError)) throw err;
      setErrors([err.message]);
      setNote(null);
    }
  };

  /** The whole configuration to the gateway, which checks each server as if added alone and says why any was refused. */
  const addAll = async () => {
    setNote(null);
    let config;
    try {
      config = readPastedConfig(example);
    } catch (err) {
      if (!(err instanceof FormInputError)) throw err;
      setErrors([err.message]);
      return;
    }
    setBusy(true);
    try {
      const outcome = pasteOutcome(await api('POST', base, config));
      setErrors(outcome.errors);
      setNote(outcome.note);
    } catch (err) {
      const outcome = err instanceof ApiFailure && Array.isArray(err.details?.refused) ? pasteOutcome(err.details) : null;
      setErrors(outcome ? [err.message, ...outcome.errors] : describeFailure(err));
    } finally {
      setBusy(false);
    }
    await onAdded();
  };

  const submit = async (e) => {
    e.preventDefault();
    setNote(null);
    let body;
    try {
      body = formToServer(form);
    } catch (err) {
      if (!(err instanceof FormInputError)) throw err;
      setErrors([err.message]);
      return;
    }
    setBusy(true);
    try {
      await api('POST', base, body);
      setErrors([]);
      setNote(`Added ${body.name}.`);
      setForm(emptyForm());
      await onAdded();
    } catch (err) {
      setErrors(describeFailure(err));
    } finally {
      setBusy(false);
    }
  };

  return html`
    <div class="mcp-add">
      <form class="mcp-form" data-testid="mcp-form" onSubmit=${submit} aria-labelledby="mcp-add-heading">
        <h2 id="mcp-add-heading">Add a server</h2>
        <label>Name <input data-testid="mcp-name" autocomplete="off" spellcheck="false" ...${field('name')} /></label>
        <label>Kind
          <select data-testid="mcp-kind" ...${field('kind')}>
            <option value="stdio">stdio (a command)</option>
            <option value="remote">remote (a URL)</option>
          </select>
        </label>
        ${form.kind === 'stdio'
          ? html`
              <label>Command <input data-testid="mcp-command" autocomplete="off" spellcheck="false" ...${field('command')} /></label>
              <label>Arguments <span class="hint">one per line</span><textarea data-testid="mcp-args" rows="3" spellcheck="false" ...${field('args')}></textarea></label>
              <label>Environment <span class="hint">KEY=value per line, stored encrypted</span><textarea data-testid="mcp-env" rows="2" spellcheck="false" ...${field('env')}></textarea></label>
            `
          : html`
              <label>URL <input data-testid="mcp-url" type="url" autocomplete="off" spellcheck="false" ...${field('url')} /></label>
              <label>Headers <span class="hint">Name: value per line, stored encrypted</span><textarea data-testid="mcp-headers" rows="2" spellcheck="false" ...${field('headers')}></textarea></label>
            `}
        <label>Description <input data-testid="mcp-description" ...${field('description')} /></label>
        <label>Trigger keywords <span class="hint">comma separated</span><input data-testid="mcp-keywords" ...${field('keywords')} /></label>
        ${errors.length > 0 &&
        html`<div class="form-error" data-testid="mcp-error" role="alert">${errors.map((line, i) => html`<p key=${i}>${line}</p>`)}</div>`}
        ${note && html`<p class="hint" role="status">${note}</p>`}
        <button type="submit" class="primary" data-testid="mcp-add" disabled=${busy}>Add server</button>
      </form>
      <div class="mcp-example">
        <h3><label for="mcp-example">Configuration example</label></h3>
        <p class="hint">Paste a Claude Desktop or Cursor configuration: fill the form from its first server, or add all its servers at once.</p>
        <textarea id="mcp-example" data-testid="mcp-example" rows="10" spellcheck="false" value=${example} onInput=${(e) => setExample(e.currentTarget.value)}></textarea>
        <button type="button" data-testid="mcp-example-parse" onClick=${fillFromExample}>Fill the form</button>
        <button type="button" data-testid="mcp-example-add" disabled=${busy} onClick=${addAll}>Add all servers</button>
      </div>
    </div>
  `;
}

/** The API's answer as lines a person can act on: the message, then each field's problems. */
function describeFailure(err) {
  if (!(err instanceof ApiFailure)) return [String(err?.message ?? err)];
  const lines = [err.message];
  const fields = err.details?.fields;
  if (fields && typeof fields === 'object') {
    for (const [name, problems] of Object.entries(fields)) lines.push(`${name}: ${[].concat(problems).join('; ')}`);
  } else if (typeof err.details?.field === 'string') {
    lines.push(`field: ${err.details.field}`);
  }
  return lines;
}
