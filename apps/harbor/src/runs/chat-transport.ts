import type { EventDict } from '#core/events/execution-event.js';

/** Where, and as whom, Harbor asks its questions. */
export interface ServerTarget {
  /** The gateway's base URL (`http://127.0.0.1:8000`). */
  baseUrl: string;
  apiKey?: string;
  assistantId: string;
}

/** One question's run, as the transport received it. */
export interface Exchange {
  events: EventDict[];
  sessionId: string;
  runId: string;
  /** From sending the question to its first non-empty `text` event; null when there was none. */
  ttftMs: number | null;
}

/**
 * Asks questions over one of the gateway's protocols, one at a time; each question starts a
 * new session, so answers never depend on what was asked before.
 */
export interface ChatTransport {
  /**
   * Sends `message` and collects its run's events up to `done`.
   *
   * @throws ExchangeError when the server refuses the question or the connection breaks;
   *   the signal's reason when `signal` aborts first.
   */
  ask(message: string, signal: AbortSignal): Promise<Exchange>;
  close(): Promise<void>;
}

/** The server refused a question or broke off its run; `code` is the gateway's `error_code` when it sent one. */
export class ExchangeError extends Error {
  override readonly name = 'ExchangeError';

  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** An HTTP error answer as an ExchangeError: `503 over_capacity: The system is full`. */
export function httpError(status: number, body: unknown): ExchangeError {
  const { error_code: code, message } = (body ?? {}) as { error_code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? `: ${message}` : '';
  return new ExchangeError(`${status}${typeof code === 'string' ? ` ${code}` : ''}${text}`, typeof code === 'string' ? code : undefined);
}

/** undici wraps the reason a request failed (ECONNREFUSED, ...) in `cause`. */
export function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

export function authHeaders(target: ServerTarget): Record<string, string> {
  return target.apiKey ? { 'x-api-key': target.apiKey } : {};
}

/** The first token of an answer: a `text` event with content. */
export function isFirstToken(event: EventDict): boolean {
  return event.event_type === 'text' && event.content !== '';
}
