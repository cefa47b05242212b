/**
 * The approval question of a run (hitl_request): the action and its arguments, approve, reject
 * or approve all for this session, and the seconds left before it is rejected automatically.
 * A modal <dialog>: focus stays inside, Enter approves (the focused button), Escape rejects.
 */
import { html, useEffect, useRef, useState } from './vendor/preact.js';

export function HitlDialog({ store }) {
  const pending = store.pendingApproval();
  const request = pending?.request ?? null;
  const dialog = useRef(null);
  const now = useNow(request?.expiresAt ? request.requestId : null);

  useEffect(() => {
    const el = dialog.current;
    if (!el) return;
    if (request) {
      if (!el.open) el.showModal();
      // Each new question starts on Approve, whichever button answered the one before.
      el.querySelector('[data-testid="hitl-approve"]')?.focus();
    } else if (el.open) {
      el.close();
    }
  }, [request?.requestId]);

  const decide = (decision) => request && void store.decide(request, decision);
  const onCancel = (e) => {
    // Escape: a refusal, never a question left unanswered behind a closed dialog.
    e.preventDefault();
    decide('reject');
  };
  const left = request?.expiresAt ? Math.max(0, Math.ceil((Date.parse(request.expiresAt) - now) / 1000)) : null;
  const action = request?.action ?? { name: '', args: {} };

  return html`
    <dialog ref=${dialog} class="hitl" data-testid="hitl-dialog" aria-labelledby="hitl-title" onCancel=${onCancel}>
      ${request &&
      html`
        <h2 id="hitl-title">Approve this action?</h2>
        <div class="hitl-action" data-testid="hitl-action">
          <p><span class="tool-name">${action.name}</span></p>
          ${action.description && html`<p class="hint">${action.description}</p>`}
          <pre>${JSON.stringify(action.args ?? {}, null, 2)}</pre>
        </div>
        ${left !== null && html`<p class="countdown">Rejected automatically in <strong data-testid="hitl-countdown">${left}</strong> s</p>`}
        <div class="hitl-buttons">
          <button type="button" class="primary" data-testid="hitl-approve" onClick=${() => decide('approve')}>Approve</button>
          <button type="button" data-testid="hitl-reject" onClick=${() => decide('reject')}>Reject</button>
          <button type="button" data-testid="hitl-approve-all" onClick=${() => decide('approve_all')}>Approve all for this session</button>
        </div>
      `}
    </dialog>
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
