import type { ExecutionEvent } from '../events/execution-event.js';

/**
 * Events a tool sends while its call is still running (an elicitation's question and outcome),
 * handed to the run's stream as they come, in order, instead of after the call.
 */
export class LiveEvents {
  private readonly queue: ExecutionEvent[] = [];
  private wake?: () => void;

  push(event: ExecutionEvent): void {
    this.queue.push(event);
    this.wake?.();
  }

  /** Yields the events pushed until `work` settles (and any pushed before), then returns its result. */
  async *until<T>(work: Promise<T>): AsyncGenerator<ExecutionEvent, T> {
    let settled = false;
    const over = work.then(
      () => void (settled = true),
      () => void (settled = true),
    );
    for (;;) {
      while (this.queue.length > 0) yield this.queue.shift()!;
      if (settled) return await work;
      await Promise.race([over, new Promise<void>((resolve) => (this.wake = resolve))]);
      this.wake = undefined;
    }
  }
}
