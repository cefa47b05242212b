/** What every provider's stream throws when its run's signal fires: a `DOMException` named `AbortError`. */
export function abortError(): Error {
  return new DOMException('The LLM request was aborted', 'AbortError');
}

/** "fetch failed (ECONNREFUSED)": the message and the low-level cause's code, whatever realm made them. */
export function describeCause(err: unknown): string {
  if (typeof err !== 'object' || err === null) return err === undefined ? '' : String(err);
  const { message, cause } = err as { message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : '';
  const text = typeof message === 'string' && message !== '' && message !== '{}' ? message : '';
  return [text, detail && `(${detail})`].filter(Boolean).join(' ');
}
