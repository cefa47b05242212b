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

/**
 * One model request's abort: the run's signal and a silence timer both abort it. The SDKs' own
 * timeouts end at the response headers; this timer also covers a stream that goes silent
 * afterwards, which would otherwise hold the run forever. Call `streaming()` once the answer
 * starts, `alive()` on each event, and `dispose()` when the request is over.
 */
export class RequestWatch {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort = () => this.controller.abort();
  private stage: 'connecting' | 'streaming' = 'connecting';
  private expired = false;

  constructor(private readonly runSignal: AbortSignal, timeoutMs: number) {
    runSignal.addEventListener('abort', this.onAbort, { once: true });
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort();
    }, timeoutMs).unref();
  }

  /** What the SDK call is given. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The stage the silence timer expired in, if it did. */
  get timedOut(): 'connecting' | 'streaming' | undefined {
    return this.expired ? this.stage : undefined;
  }

  streaming(): void {
    this.stage = 'streaming';
    this.timer.refresh();
  }

  alive(): void {
    this.timer.refresh();
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.runSignal.removeEventListener('abort', this.onAbort);
  }
}
