import type { EventDict } from '#core/events/execution-event.js';
import type { RunEventArchive } from '#core/session/session-store.js';

/**
 * Buffers run events and writes them to the durable archive in batches: one row per run
 * per flush, never a row per token. A run's buffer is flushed on its `done` too.
 */
export class EventArchiver {
  private readonly buffers = new Map<string, EventDict[]>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly archive: RunEventArchive, private readonly onError: (err: unknown) => void, intervalMs = 1_000) {
    this.timer = setInterval(() => void this.flushAll(), intervalMs);
    this.timer.unref();
  }

  add(event: EventDict): void {
    const list = this.buffers.get(event.run_id);
    if (list) list.push(event);
    else this.buffers.set(event.run_id, [event]);
  }

  /** Writes what is buffered for one run; retries once, then reports. */
  async flushRun(runId: string): Promise<void> {
    const events = this.buffers.get(runId);
    if (!events?.length) return;
    this.buffers.delete(runId);
    events.sort((a, b) => a.seq - b.seq);
    try {
      await this.archive.appendBatch(runId, events);
    } catch (first) {
      try {
        await this.archive.appendBatch(runId, events);
      } catch {
        this.onError(first);
      }
    }
  }

  /** Writes every run's buffer in one statement. */
  async flushAll(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.buffers.size === 0) return;
      const batches = [...this.buffers].map(([runId, events]) => ({ runId, events }));
      this.buffers.clear();
      try {
        await this.archive.appendMany(batches);
      } catch (first) {
        try {
          await this.archive.appendMany(batches);
        } catch {
          this.onError(first);
        }
      }
    });
    return this.flushing;
  }

  /** Resolves once the periodic flush in progress, if any, has written. */
  async idle(): Promise<void> {
    await this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushAll();
  }
}
