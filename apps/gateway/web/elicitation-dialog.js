/**
 * An MCP server's question to the person during a tool call (elicitation_request): a form built
 * from the server's schema, or a link to open (URL mode), with Accept, Decline and Cancel, and
 * the seconds left before it counts as cancelled. A modal <dialog>: Escape cancels.
 */
import { html, useEffect, useRef, useState } from './vendor/preact.js';
import { formContent, formFields, initialValues } from './elicitation-form.js';

export function ElicitationDialog({ store }) {
  const pending = store.pendingElicitation();
  const question = pending?.question ?? null;
  const dialog = useRef(null);
  const fields = question?.mode === 'form' ? formFields(question.schema ?? undefined) : [];
  const [values, setValues] = useState({});
  const now = useNow(question?.expiresAt ? question.requestId : null);

  useEffect(() => {
    const el = dialog.current;
    if (!el) return;
    if (question) {
      setValues(initialValues(fields));
      if (!el.open) el.showModal();
      el.querySelector('input, select, [data-testid="elicitation-accept"]')?.focus();
    } else if (el.open) {
      el.close();
    }
  }, [question?.requestId]);

  const answer = (action) => question && !question.sending && void store.answerElicitation(question, action, action === 'accept' && question.mode === 'form' ? formContent(fields, values) : undefined);
  const onSubmit = (e) => {
    e.preventDefault();
    answer('accept');
  };
  const onCancel = (e) => {
    // Escape: the question is dismissed, never left open behind a closed dialog.
    e.preventDefault();
    answer('cancel');
  };
  const set = (name, value) => setValues({ ...values, [name]: value });
  const left = question?.expiresAt ? Math.max(0, Math.ceil((Date.parse(question.expiresAt) - now) / 1000)) : null;
  const problems = question?.problems ?? {};

  return html`
    <dialog ref=${dialog} class="hitl elicitation" data-testid="elicitation-dialog" aria-labelledby="elicitation-title" onCancel=${onCancel}>
      ${question &&
      html`
        <form method="dialog" onSubmit=${onSubmit} novalidate>
          <h2 id="elicitation-title"><span class="tool-name">${question.server}</span> asks</h2>
          <p data-testid="elicitation-message" class="elicitation-message">${question.message}</p>
          ${question.mode === 'url' && html`<${UrlToOpen} url=${question.url} />`}
          ${fields.map((field) => html`<${Field} key=${field.name} field=${field} value=${values[field.name]} problems=${problems[field.name]} onInput=${(v) => set(field.name, v)} />`)}
          ${question.error && html`<p class="banner" role="alert" data-testid="elicitation-error">${question.error}</p>`}
          ${left !== null && html`<p class="countdown">Cancelled automatically in <strong data-testid="elicitation-countdown">${left}</strong> s</p>`}
          <div class="hitl-buttons">
            <button type="submit" class="primary" data-testid="elicitation-accept" disabled=${question.sending}>${question.mode === 'url' ? 'Done, continue' : 'Accept'}</button>
            <button type="button" data-testid="elicitation-decline" disabled=${question.sending} onClick=${() => answer('decline')}>Decline</button>
            <button type="button" data-testid="elicitation-cancel" disabled=${question.sending} onClick=${() => answer('cancel')}>Cancel</button>
          </div>
        </form>
      `}
    </dialog>
  `;
}

/** The URL in full, and its site on its own, so the person sees where it leads before opening it. */
function UrlToOpen({ url }) {
  let host = '';
  try {
    host = new URL(url).host;
  } catch {
    return html`<p class="banner" role="alert">The server sent a link that is not a web address.</p>`;
  }
  return html`
    <div class="elicitation-url">
      <p>Opens <strong data-testid="elicitation-host">${host}</strong> in a new tab:</p>
      <p><a href=${url} target="_blank" rel="noopener noreferrer" data-testid="elicitation-url">${url}</a></p>
    </div>
  `;
}

function Field({ field, value, problems, onInput }) {
  const id = `elicit-${field.name}`;
  const hint = field.description && html`<span class="hint" id=${`${id}-hint`}>${field.description}</span>`;
  const invalid = problems?.length ? 'true' : undefined;
  const error = problems?.length ? html`<span class="field-error" role="alert">${problems.join(', ')}</span>` : null;
  const described = field.description ? `${id}-hint` : undefined;
  if (field.kind === 'boolean') {
    return html`
      <div class="field checkbox">
        <label><input id=${id} name=${field.name} type="checkbox" checked=${value === true} aria-describedby=${described} onChange=${(e) => onInput(e.currentTarget.checked)} /> ${field.label}</label>
        ${hint} ${error}
      </div>
    `;
  }
  if (field.kind === 'multi') {
    const chosen = Array.isArray(value) ? value : [];
    return html`
      <fieldset class="field">
        <legend>${field.label}</legend>
        ${hint}
        ${field.options.map(
          (o) => html`<label key=${o.value}><input type="checkbox" name=${field.name} value=${o.value} checked=${chosen.includes(o.value)} onChange=${(e) => onInput(e.currentTarget.checked ? [...chosen, o.value] : chosen.filter((v) => v !== o.value))} /> ${o.label}</label>`,
        )}
        ${error}
      </fieldset>
    `;
  }
  const label = html`<label for=${id}>${field.label}${field.required ? html` <span aria-hidden="true">*</span>` : ''}</label>`;
  if (field.kind === 'choice') {
    return html`
      <div class="field">
        ${label} ${hint}
        <select id=${id} name=${field.name} required=${field.required} aria-invalid=${invalid} aria-describedby=${described} onChange=${(e) => onInput(e.currentTarget.value)}>
          ${!field.required && html`<option value="" selected=${value === ''}>—</option>`}
          ${field.options.map((o) => html`<option key=${o.value} value=${o.value} selected=${value === o.value}>${o.label}</option>`)}
        </select>
        ${error}
      </div>
    `;
  }
  const numeric = field.kind === 'number' || field.kind === 'integer';
  const type = numeric ? 'number' : field.format === 'email' ? 'email' : field.format === 'uri' ? 'url' : field.format === 'date' ? 'date' : field.format === 'date-time' ? 'datetime-local' : 'text';
  return html`
    <div class="field">
      ${label} ${hint}
      <input
        id=${id}
        name=${field.name}
        type=${type}
        value=${value ?? ''}
        required=${field.required}
        step=${field.kind === 'integer' ? '1' : numeric ? 'any' : undefined}
        min=${numeric ? field.min ?? undefined : undefined}
        max=${numeric ? field.max ?? undefined : undefined}
        aria-invalid=${invalid}
        aria-describedby=${described}
        onInput=${(e) => onInput(e.currentTarget.value)}
      />
      ${error}
    </div>
  `;
}

/** The current time, ticking while `key` is set (a question with a deadline is open). */
function useNow(key) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!key) return undefined;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(timer);
  }, [key]);
  return now;
}
