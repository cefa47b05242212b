import type { EventDict } from '#core/events/execution-event.js';
import type { RunEventArchive } from '#core/session/session-store.js';
import { isDatabaseUnavailable } from '#persistence/connection-errors.js';

/** Flushes in a row in which the archive may refuse one run's batch before it is dropped. */
const MAX_REFUSALS = 5;

export interface EventArchiverOptions {
  /** Milliseconds between flushes (and retries of what failed). */
  intervalMs?: number;
  /** Events kept for a database that does not answer; past that the oldest runs' are dropped, loudly. */
  maxPendingEvents?: number;
}

/**
 * Buffers run events and writes them to the durable archive in batches: one row per run
 * per flush, never a row per token. A run's buffer is flushed on its `done` too.
 *
 * Nothing is dropped on a failed write: the batch goes back into the buffer, ahead of newer
 * events of its run, and the next flush tries again, so a database outage delays the archive
 * instead of losing it (bounded by `maxPendingEvents`). When the one-statement write of a
 * flush fails, each run is written on its own, so one run's bad batch cannot hold back the
 * others.
 */
export class EventArchiver {
  private readonly buffers = new Map<string, EventDict[]>();
  private readonly refusals = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly maxPending: number;
  private pending = 0;
  private flushing: Promise<void> = Promise.resolve();
  /** Runs whose end asked for a flush that has not started yet, and that flush. */
  private readonly ending = new Set<string>();
  private nextEnding?: Promise<void>;

  constructor(
    private readonly archive: RunEventArchive,
    private readonly onError: (err: unknown, detail: { runs: number; events: number; dropped?: number }) => void,
    options: EventArchiverOptions = {},
  ) {
    this.maxPending = options.maxPendingEvents ?? 200_000;
    this.timer = setInterval(() => void this.flushAll(), options.intervalMs ?? 1_000);
    this.timer.unref();
  }

  /** Events waiting to be written (new ones and failed ones). */
  get pendingEvents(): number {
    return this.pending;
  }

  add(event: EventDict): void {
    const list = this.buffers.get(event.run_id);
    if (list) list.push(event);
    else this.buffers.set(event.run_id, [event]);
    this.pending++;
    if (this.pending > this.maxPending) this.dropOldest();
  }

  /**
   * Writes what is buffered for one run (at its end); what fails stays buffered for the next
   * flush. Runs that end while a flush is being written go together in the next one: one
   * statement for all of them. Flushes take turns, so a run's slices land in seq order.
   */
  flushRun(runId: string): Promise<void> {
    this.ending.add(runId);
    this.nextEnding ??= this.enqueue(() => {
      const runIds = [...this.ending];
      this.ending.clear();
      this.nextEnding = undefined;
      return this.write(runIds);
    });
    return this.nextEnding;
  }

  /** Writes every run's buffer in one statement; falls back to a statement per run when that fails. */
  flushAll(): Promise<void> {
    return this.enqueue(() => this.write([...this.buffers.keys()]));
  }

  /** Resolves once the periodic flush in progress, if any, has written. */
  async idle(): Promise<void> {
    await this.flushing;
  }

  private enqueue(flush: () => Promise<void>): Promise<void> {
    this.flushing = this.flushing.then(flush);
    return this.flushing;
  }

  /**
   * Writes the buffers of `runIds` in one statement; when that fails, run by run, so one run's
   * bad batch cannot hold back the others, and a database that is down keeps them all buffered.
   */
  private async write(runIds: string[]): Promise<void> {
    const batches = runIds.flatMap((runId) => {
      const events = this.take(runId);
      return events ? [{ runId, events }] : [];
    });
    if (batches.length === 0) return;
    try {
      await this.archive.appendMany(batches);
      for (const batch of batches) this.refusals.delete(batch.runId);
      return;
    } catch (err) {
      this.onError(err, { runs: batches.length, events: batches.reduce((n, b) => n + b.events.length, 0) });
      if (isDatabaseUnavailable(err)) {
        for (const batch of batches) this.putBack(batch.runId, batch.events);
        return;
      }
    }
    for (const [i, batch] of batches.entries()) {
      try {
        await this.archive.appendBatch(batch.runId, batch.events);
        this.refusals.delete(batch.runId);
      } catch (err) {
        if (isDatabaseUnavailable(err)) {
          // Down: keep this one and the rest for the next flush, in order.
          for (const rest of batches.slice(i)) this.putBack(rest.runId, rest.events);
          return;
        }
        this.refused(batch.runId, batch.events, err);
      }
    }
  }

  /** Stops the timer and makes a last attempt; what still fails is reported as lost. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushAll();
    if (this.pending > 0) this.onError(new Error('archive not reachable at shutdown'), { runs: this.buffers.size, events: this.pending, dropped: this.pending });
  }

  /** A batch the archive answered with an error: tried again a few flushes, then dropped, loudly. */
  private refused(runId: string, events: EventDict[], err: unknown): void {
    const count = (this.refusals.get(runId) ?? 0) + 1;
    if (count < MAX_REFUSALS) {
      this.refusals.set(runId, count);
      this.putBack(runId, events);
      return;
    }
    this.refusals.delete(runId);
    this.onError(err, { runs: 1, events: events.length, dropped: events.length });
  }

  private take(runId: string): EventDict[] | undefined {
    const events = this.buffers.get(runId);
    if (!events?.length) return undefined;
    this.buffers.delete(runId);
    this.pending -= events.length;
    return events.sort((a, b) => a.seq - b.seq);
  }

  private putBack(runId: string, events: EventDict[]): void {
    const newer = this.buffers.get(runId) ?? [];
    this.buffers.delete(runId);
    // Map order: should the bound be hit, the runs re-queued least recently go first.
    this.buffers.set(runId, [...events, ...newer]);
    this.pending += events.length;
    if (this.pending > this.maxPending) this.dropOldest();
  }

  private dropOldest(): void {
    let dropped = 0;
    let runs = 0;
    for (const [runId, events] of this.buffers) {
      if (this.pending <= this.maxPending) break;
      this.buffers.delete(runId);
      this.pending -= events.length;
      dropped += events.length;
      runs++;
    }
    this.onError(new Error(`more than ${this.maxPending} events waiting for the archive`), { runs, events: dropped, dropped });
  }
}
