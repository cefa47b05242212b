/** Rate limited (429) or overloaded (503, and Anthropic's 529): the provider says "not now", not "no". */
const BUSY_STATUSES = new Set([429, 503, 529]);

/**
 * A failed LLM request, from any provider; the message says what to check and never contains
 * an API key. A provider that is rate limiting or overloaded makes it `recoverable`: the same
 * message may succeed later, after `retryAfterSeconds` when the provider said how long.
 */
export class LlmRequestError extends Error {
  override readonly name = 'LlmRequestError';
  readonly recoverable: boolean;
  /**
   * What a person using the agent is shown: the message without the LLM's address (an internal
   * URL is the operator's business; the worker logs the whole message).
   */
  publicMessage: string;

  constructor(
    message: string,
    /** HTTP status, when the server answered (or the status an error event mid-stream stands for). */
    readonly status?: number,
    /** What the provider's `retry-after-ms` or `retry-after` asked for, in seconds. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.publicMessage = message;
    this.recoverable = status !== undefined && BUSY_STATUSES.has(status);
  }

  /** Leaves `address` (the LLM's base URL) out of {@link publicMessage}. */
  withoutAddress(address: string): this {
    if (address) this.publicMessage = this.message.split(address).join('the LLM endpoint');
    return this;
  }
}

/**
 * Seconds a response's `retry-after-ms` or `retry-after` (seconds or an HTTP date) asks to wait;
 * undefined when it asks nothing usable.
 */
export function retryAfterSeconds(headers: { get(name: string): string | null } | undefined, now = Date.now()): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms / 1000;
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
