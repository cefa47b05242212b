import { DoneEvent, RunQueuedEvent } from '#core/events/execution-event.js';
import type { RunEventLog, RunOwner } from './run-event-log.js';
import type { RunJobData, RunQueue } from './run-queue.js';
import type { SessionEventRelay } from './session-event-relay.js';

/** How often a run waiting for earlier runs looks again without being woken (a run whose log expired, a lost message). */
const RECHECK_MS = 2_000;

/** What a cancel found: the run had ended already; was waiting in the queue and is ended now; or is running on a worker. */
export type CancelOutcome = 'finished' | 'ended_queued' | 'running';

/**
 * The one owner of a run's passage through its states: queued (run_queued, seq 1, then the
 * job), started and done (the worker's events), and the two ways a run ends before a worker
 * has it: cancelled while queued, or waiting behind an earlier run of its session until that
 * run's done arrives.
 */
export class RunLifecycle {
  constructor(
    private readonly log: RunEventLog,
    private readonly queue?: RunQueue,
    private readonly relay?: SessionEventRelay,
  ) {}

  /** Announces a run (run_queued is its seq 1; the run joins its session's active runs) and queues its job. */
  async enqueue(job: RunJobData): Promise<void> {
    if (!this.queue) throw new Error('RunLifecycle needs the run queue to enqueue');
    await Promise.all([
      this.log.markActive(job.sessionId, job.runId, { tenantId: job.tenantId, userId: job.userId }),
      this.log.append(new RunQueuedEvent({ sessionId: job.sessionId, runId: job.runId }).toDict()),
    ]);
    await this.queue.enqueue(job);
  }

  /**
   * The session's runs without a done that `owner` started, read from Redis alone (no database):
   * what a cancel acts on first. Empty when there are none, or Redis lost them.
   */
  async activeRunsOf(sessionId: string, owner: RunOwner): Promise<string[]> {
    const runs = await this.log.activeRuns(sessionId);
    return runs.filter((run) => run.tenantId === owner.tenantId && run.userId === owner.userId).map((run) => run.runId);
  }

  /**
   * Cancels a run: records the cancel (a worker that has the run, or takes it later, sees it),
   * and when no worker holds it, removes its job and appends its done here. The record and the
   * removal travel together in one round trip: removing the job of a run that had ended anyway
   * takes nothing from it, and a worker that holds the run keeps its job.
   */
  async cancel(runId: string, sessionId: string): Promise<CancelOutcome> {
    if (!this.queue) throw new Error('RunLifecycle needs the run queue to cancel');
    const [open, removed] = await Promise.all([this.log.requestCancel(runId), this.queue.removeWaiting(runId)]);
    if (!open) {
      await this.log.forgetActive(sessionId, runId);
      return 'finished';
    }
    if (!removed) return 'running';
    // No worker holds it: its done is appended here, unless the run ended meanwhile (then that done stands).
    const ended = await this.log.append(new DoneEvent({ sessionId, runId }, true, 'cancelled').toDict());
    return ended.status === 'sealed' ? 'finished' : 'ended_queued';
  }

  /**
   * Resolves once each of `runIds` (earlier runs of the session) has ended: woken by its done on
   * the session's channel, with a look every few seconds for a run `ended` finds over otherwise
   * (its log expired) or a stop asked for by `stop` (the waiting run's cancel record).
   * @param ended Whether a run has ended, read from the log or the store.
   * @param stop Whether to stop waiting (checked at each look).
   * @throws the signal's reason when it aborts.
   */
  async waitForDone(sessionId: string, runIds: readonly string[], signal: AbortSignal, ended: (runId: string) => Promise<boolean>, stop: () => Promise<boolean> = async () => false): Promise<void> {
    if (!this.relay) throw new Error('RunLifecycle needs the event relay to wait for runs');
    const pending = new Set(runIds);
    let wake: () => void = () => undefined;
    const unwatch = await this.relay.watch(sessionId, (event) => {
      if (event.event_type === 'done' && pending.delete(event.run_id)) wake();
    });
    const onAbort = () => wake();
    signal.addEventListener('abort', onAbort);
    try {
      for (;;) {
        // Armed before looking, so a done that lands during the look wakes the wait below.
        const woken = new Promise<void>((resolve) => (wake = resolve));
        for (const runId of [...pending]) if (await ended(runId)) pending.delete(runId);
        signal.throwIfAborted();
        if (pending.size === 0 || (await stop())) return;
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([woken, new Promise<void>((resolve) => (timer = setTimeout(resolve, RECHECK_MS)))]);
        clearTimeout(timer);
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      unwatch();
    }
  }
}
