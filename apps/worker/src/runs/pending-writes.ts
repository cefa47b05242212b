import { isDatabaseUnavailable } from '#persistence/connection-errors.js';

interface PendingWrite {
  name: string;
  write: () => Promise<void>;
}

/**
 * Store writes that must not be lost to a database outage (a run's answer and final status).
 * A write that fails because the database cannot be reached is kept, in order, and retried
 * until it succeeds; any other failure is the caller's. Writes are steps a retry may repeat,
 * so each must be idempotent.
 */
export class PendingWrites {
  private readonly queue: PendingWrite[] = [];
  private readonly timer: NodeJS.Timeout;
  private draining: Promise<void> = Promise.resolve();

  constructor(
    private readonly onEvent: (event: 'queued' | 'written' | 'dropped', detail: { name: string; pending: number; err?: unknown }) => void,
    private readonly maxPending = 10_000,
    intervalMs = 1_000,
  ) {
    this.timer = setInterval(() => void this.drain(), intervalMs);
    this.timer.unref();
  }

  get size(): number {
    return this.queue.length;
  }

  /**
   * Writes now, or queues the write behind earlier ones that wait for the database.
   * @returns true when written now, false when queued.
   * @throws whatever the write throws, unless the database was unreachable.
   */
  async run(name: string, write: () => Promise<void>): Promise<boolean> {
    if (this.queue.length === 0) {
      try {
        await write();
        return true;
      } catch (err) {
        if (!isDatabaseUnavailable(err)) throw err;
        this.enqueue({ name, write }, err);
        return false;
      }
    }
    this.enqueue({ name, write });
    return false;
  }

  /** Stops retrying after one last attempt; returns how many writes are still pending (lost). */
  async close(): Promise<number> {
    clearInterval(this.timer);
    await this.drain();
    return this.queue.length;
  }

  private enqueue(item: PendingWrite, err?: unknown): void {
    if (this.queue.length >= this.maxPending) this.onEvent('dropped', { name: this.queue.shift()!.name, pending: this.queue.length });
    this.queue.push(item);
    this.onEvent('queued', { name: item.name, pending: this.queue.length, err });
  }

  private drain(): Promise<void> {
    this.draining = this.draining.then(async () => {
      while (this.queue.length > 0) {
        const head = this.queue[0];
        let outcome: 'written' | 'dropped' = 'written';
        let failure: unknown;
        try {
          await head.write();
        } catch (err) {
          if (isDatabaseUnavailable(err)) return; // still down: try again later, in order
          [outcome, failure] = ['dropped', err];
        }
        this.queue.shift();
        this.onEvent(outcome, { name: head.name, pending: this.queue.length, err: failure });
      }
    });
    return this.draining;
  }
}
