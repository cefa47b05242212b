import { DoneEvent, ErrorEvent, RunQueuedEvent, ToolResultEvent, type EventDict, type RunUsage } from '../events/execution-event.js';
import type { ParkedWait } from '../engine/run-journal.js';
import type { NewMessage, RunFinish, RunRecord } from '../session/session-store.js';
import { GroupCommit } from '../util/group-commit.js';
import {
  TIMED_OUT_MESSAGE,
  type AppendResult,
  type DurableWrites,
  type HitlRecords,
  type ParkedDeadlines,
  type RunJobData,
  type RunJobs,
  type RunLedger,
  type RunLog,
  type RunLogger,
  type RunOwner,
  type RunRef,
  type RunRelay,
  type RunRows,
  type RunSlots,
  type RunBudgets,
} from './run-ports.js';
import { canMove, move, type FinalRunState, type RunState } from './run-state.js';

/** How often a run waiting for earlier runs looks again without being woken (a run whose log expired, a lost message). */
const RECHECK_MS = 2_000;

/** What a cancel found: the run had ended already; was held by no worker (queued or parked) and is ended now; or is running on a worker. */
export type CancelOutcome = 'finished' | 'ended_queued' | 'running';

/**
 * What the expiry of a parked run's question found: it ended the run here (`timeout`); the run
 * is not parked (continued, or ended); its question was answered (or cancelled) in time; or a
 * worker had taken the run, which reads the question closed and ends the run `timeout` itself.
 */
export type ExpireOutcome = 'ended' | 'not_parked' | 'answered' | 'running';

/** How a run a worker holds ends. */
export interface RunEnd {
  status: Exclude<FinalRunState, 'lost'>;
  /** The done's reason (`rejected`, `max_iterations`, …). */
  reason?: string;
  /** What went wrong, kept on the run's row. */
  error?: string;
  /** The messages the run added, stored with its final row (none for a cancelled run). */
  messages: NewMessage[];
  /** A call the run leaves open (a parked run cancelled before it continued): it ends cancelled before the done. */
  closeCall?: string;
  /** What the run's model calls used, for its done. */
  usage?: RunUsage;
}

/** What every part of the lifecycle writes to: the gateway's part needs no more. */
export interface RunLifecyclePorts {
  log: RunLog;
  jobs: RunJobs;
  /** The run rows and the archive of runs no worker archives. */
  rows: RunRows;
  /** Tenants' concurrent-run slots: a run gives its slot back when it ends. */
  slots: RunSlots;
  /** Parked runs' waits, and the epoch that fences off a worker that still believes it holds a lost run. */
  ledger: RunLedger;
  /** The approvals a cancelled parked run leaves: decided `cancelled`; an expired one's: `timeout`. */
  hitl: HitlRecords;
  logger: RunLogger;
}

/** What the worker's part of the lifecycle writes to besides. */
export interface WorkerRunLifecyclePorts extends RunLifecyclePorts {
  /** Waiting for a session's earlier runs. */
  relay: RunRelay;
  /** Parked runs' deadlines: a run that parks enters its question's here, and a sweep expires it on time. */
  deadlines: ParkedDeadlines;
  /** The final rows of a worker's runs go through it (a database outage does not hold the done back). */
  durable: DurableWrites;
  /** Whether a store error means the database could not be reached (such a write is kept for later, not failed). */
  databaseUnavailable: (err: unknown) => boolean;
  /** Runs' reservations on their budgets: what a run still holds is given back when another worker takes it, and when it ends. */
  budgets: RunBudgets;
}

export type { RunRef };

/**
 * The one owner of a run's passage through its states (run-state.ts): the only writer of a
 * state change, of the run's row, of its `done`, of the archive hand-off of runs no worker
 * archives, and of its tenant slot. This part is what the gateway uses: it enqueues, cancels,
 * wakes and expires runs no worker holds. The worker's part ({@link WorkerRunLifecycle}) starts,
 * parks and finishes the runs it holds, and its reaper ends runs nobody holds.
 *
 * Every end is guarded twice over: the log takes one `done` per run (a sealed run refuses the
 * rest) and the row changes by compare-and-set from an active state only, so two writers
 * racing to end a run end it once.
 */
export class RunLifecycle {
  constructor(protected readonly ports: RunLifecyclePorts) {}

  // ── queued ────────────────────────────────────────────────────────────────

  /** Announces a run (run_queued is its seq 1; the run joins its session's active runs) and queues its job. */
  async enqueue(job: RunJobData): Promise<void> {
    const { log, jobs } = this.ports;
    await Promise.all([
      log.markActive(job.sessionId, job.runId, { tenantId: job.tenantId, userId: job.userId }),
      log.append(new RunQueuedEvent({ sessionId: job.sessionId, runId: job.runId }).toDict()),
    ]);
    await jobs.enqueue(job);
  }

  /**
   * A run that was never queued (queued → failed): its row, if written, ends failed, or its
   * session would answer 409 forever; its tenant slot is free again.
   * @param stored whether the run's row was written.
   */
  async abandon(run: Pick<RunRef, 'runId' | 'tenantId'>, stored: boolean): Promise<void> {
    if (stored) await this.endRow(run.runId, ['queued'], 'failed', 'The run could not be queued').catch(() => undefined);
    await this.releaseSlot(run);
  }

  /**
   * The session's runs without a done that `owner` started, read from Redis alone (no database):
   * what a cancel acts on first. Empty when there are none, or Redis lost them.
   */
  async activeRunsOf(sessionId: string, owner: RunOwner): Promise<string[]> {
    const runs = await this.ports.log.activeRuns(sessionId);
    return runs.filter((run) => run.tenantId === owner.tenantId && run.userId === owner.userId).map((run) => run.runId);
  }

  /**
   * Cancels a run: records the cancel (a worker that has the run, or takes it later, sees it),
   * and when no worker holds it (queued, or parked waiting for a person), removes its job and
   * ends it here (→ cancelled): a parked run's open call ends cancelled and its question is
   * closed, as on a worker; then its done, its row, its archive and its slot. The record and the
   * removal travel together in one round trip: removing the job of a run that had ended anyway
   * takes nothing from it, and a worker that holds the run keeps its job.
   */
  async cancel(run: RunRef): Promise<CancelOutcome> {
    const { log, jobs, ledger, hitl } = this.ports;
    const { runId, sessionId } = run;
    const [open, removed] = await Promise.all([log.requestCancel(runId), jobs.removeWaiting(runId)]);
    if (!open) {
      await log.forgetActive(sessionId, runId);
      return 'finished';
    }
    if (!removed) return 'running';
    const parked = await ledger.parkedOf(runId);
    if (parked) {
      const closed = await hitl.decide(parked.requestId, null, 'cancelled').catch(() => undefined);
      // Its expiry closed the question first: the expiry closes the open call (once), and whichever done lands first ends the run.
      if (parked.toolCallId && closed?.outcome !== 'decided:timeout') await log.append(new ToolResultEvent({ sessionId, runId }, parked.toolCallId, { error: 'Cancelled' }, 'cancelled').toDict(), undefined, true);
    }
    // Its done is appended here, unless the run ended meanwhile (then that done stands).
    const ended = await log.append(new DoneEvent({ sessionId, runId }, true, 'cancelled').toDict());
    if (ended.status === 'sealed') return 'finished';
    // A parked run's row says waiting, or still running when that write was missed.
    await this.endRow(runId, parked ? ['waiting', 'running'] : ['queued'], 'cancelled', parked ? 'cancelled while waiting' : 'cancelled while queued');
    await this.archive(runId);
    await this.releaseSlot(run);
    return 'ended_queued';
  }

  /**
   * Ends a parked run whose question's deadline has passed (waiting → timeout), where the
   * deadline sweep finds it: the question closes `timeout` by compare-and-set (an answer that
   * came in time wins, and the run continues with it), the job is removed (a worker that took
   * it already reads the question closed and ends the run `timeout` itself), then the open call's
   * `tool_result{timeout}`, the row, the tenant slot, `done{cancelled, reason: timeout}` and the
   * archive, as a cancel of a parked run does. No worker is needed.
   */
  async expire(run: RunRef): Promise<ExpireOutcome> {
    const { log, ledger, hitl, jobs } = this.ports;
    const { runId, sessionId } = run;
    const parked = await ledger.parkedOf(runId);
    if (!parked || (await log.isSealed(runId))) return 'not_parked';
    const closed = await hitl.decide(parked.requestId, null, 'timeout', TIMED_OUT_MESSAGE);
    // `missing`: the record outlived its TTL; the deadline stands all the same.
    if (closed.outcome !== 'ok' && closed.outcome !== 'decided:timeout' && closed.outcome !== 'missing') return 'answered';
    if (!(await jobs.removeWaiting(runId))) return 'running';
    const envelope = { sessionId, runId };
    if (parked.toolCallId) await log.append(new ToolResultEvent(envelope, parked.toolCallId, { error: TIMED_OUT_MESSAGE }, 'timeout').toDict(), undefined, true);
    // The row and the slot before the done goes out, as a worker's end does: a client that reads
    // the run, or sends its next chat, on the done finds it ended and is admitted.
    await this.endRow(runId, ['waiting', 'running'], 'timeout', TIMED_OUT_MESSAGE);
    await this.releaseSlot(run);
    const ended = await log.append(new DoneEvent(envelope, true, 'timeout').toDict());
    if (ended.status === 'sealed') return 'not_parked';
    // No worker archives the end of this run: its log goes to the archive here.
    await this.archive(runId);
    return 'ended';
  }

  /**
   * The wait of a parked run is over (an answer came): its job goes back to the queue now, and
   * any worker continues it from its ledger. Does nothing for a run that is not parked.
   */
  async wake(runId: string): Promise<void> {
    await this.ports.jobs.promote(runId);
  }

  /** Gives back the tenant slot of a run that ended elsewhere (its done found in the log by a worker that took it). */
  async released(run: Pick<RunRef, 'runId' | 'tenantId'>): Promise<void> {
    await this.releaseSlot(run);
  }

  /**
   * Ends a run's row: each move from `from` to `to` goes through the state table (an illegal
   * one throws before anything is written), and the row changes only from one of `from`.
   * @returns whether the row changed (false: it had moved on, e.g. another writer ended it).
   * @throws IllegalRunTransition when the table has no such move.
   */
  protected async endRow(runId: string, from: readonly RunState[], to: FinalRunState, error?: string): Promise<boolean> {
    for (const state of from) move(runId, state, to);
    return this.ports.rows.runs.markFinished(runId, to, error, from);
  }

  /** A run no worker archives (it ended where no worker held it): its log goes to the archive here. */
  protected async archive(runId: string): Promise<void> {
    await this.ports.rows.events.appendBatch(runId, await this.ports.log.range(runId, 0));
  }

  protected async releaseSlot(run: Pick<RunRef, 'runId' | 'tenantId'>): Promise<void> {
    await this.ports.slots.release(run.tenantId, run.runId).catch((err: unknown) => this.ports.logger.warn({ run_id: run.runId, err }, "could not give back the run's tenant slot; gateways prune it later"));
  }
}

/**
 * The worker's part of the lifecycle: a worker starts (or continues) the runs it holds, parks
 * them while they wait for a person, ends them, and waits for a session's earlier runs; its
 * reaper ends runs nobody holds.
 */
export class WorkerRunLifecycle extends RunLifecycle {
  /**
   * Rows are written in groups, as the gateway writes submissions: the runs that start (or end)
   * while one group is written go in the next, so a burst costs a few statements, not a few per
   * run. A group that fails is written run by run, so a run whose rows cannot be written fails alone.
   */
  private readonly starts: GroupCommit<string>;
  private readonly finishes: GroupCommit<RunFinish>;

  constructor(protected override readonly ports: WorkerRunLifecyclePorts) {
    super(ports);
    const { rows } = ports;
    this.starts = new GroupCommit((runIds) => (runIds.length === 1 ? rows.runs.markStarted(runIds[0]!) : rows.submissions.startMany(runIds)));
    this.finishes = new GroupCommit((finishes) => (finishes.length === 1 ? this.finishOne(finishes[0]!) : rows.submissions.finishMany(finishes)));
  }

  /**
   * Resolves once each of `runIds` (earlier runs of the session) has ended: woken by its done on
   * its channel, with a look every few seconds for a run `ended` finds over otherwise (its log
   * expired) or a stop asked for by `stop` (the waiting run's cancel record).
   * @param ended Whether a run has ended, read from the log or the store.
   * @param stop Whether to stop waiting (checked at each look).
   * @throws the signal's reason when it aborts.
   */
  async waitForDone(runIds: readonly string[], signal: AbortSignal, ended: (runId: string) => Promise<boolean>, stop: () => Promise<boolean> = async () => false): Promise<void> {
    const { relay } = this.ports;
    const pending = new Set(runIds);
    let wake: () => void = () => undefined;
    const watches = await Promise.allSettled(
      runIds.map((runId) =>
        relay.watch(runId, (event) => {
          if (event.event_type === 'done' && pending.delete(event.run_id)) wake();
        }),
      ),
    );
    const unwatch = watches.flatMap((w) => (w.status === 'fulfilled' ? [w.value] : []));
    const failed = watches.find((w): w is PromiseRejectedResult => w.status === 'rejected');
    if (failed) {
      for (const stopWatching of unwatch) stopWatching();
      throw failed.reason;
    }
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
      for (const stopWatching of unwatch) stopWatching();
    }
  }

  // ── running ⇄ waiting ─────────────────────────────────────────────────────

  /**
   * A worker starts (or continues) a run: queued or waiting → running, on its row. A run that
   * was started before (another worker held it, and may have died mid-call) first gives back
   * what that worker had reserved on its budgets: this worker reserves its own calls again.
   * @param continued whether the run had started before.
   */
  async start(run: Pick<RunRef, 'runId' | 'tenantId'>, continued = false): Promise<void> {
    if (continued) await this.releaseBudgets(run);
    await this.starts.add(run.runId);
  }

  /**
   * A run waits for a person (running → waiting): its wait is kept in the ledger, fenced by the
   * worker's epoch, its question's deadline is entered for the expiry sweep, and its row says
   * waiting. The worker then gives its job back to the queue, delayed until the wait expires,
   * and calls {@link parked}.
   * @param seq the last event the run sent before parking.
   * @throws RunFencedError when another worker owns the run.
   */
  async park(run: RunRef, epoch: number, wait: ParkedWait, seq: number): Promise<void> {
    const { ledger, deadlines, rows, logger } = this.ports;
    await ledger.park(run.runId, epoch, { ...wait, seq });
    await deadlines.add(run, wait.until);
    await rows.runs.markWaiting(run.runId).catch((err: unknown) => logger.warn({ run_id: run.runId, err }, "could not mark the run's row waiting"));
  }

  /**
   * Once a parked run's job is back in the queue (delayed): an answer that came while it parked
   * found no job to wake, so the run is woken here.
   */
  async parked(wait: ParkedWait, runId: string): Promise<void> {
    const record = await this.ports.hitl.get(wait.requestId);
    if (record && record.status !== 'pending') await this.wake(runId);
  }

  // ── ends ──────────────────────────────────────────────────────────────────

  /**
   * A worker ends the run it holds (running → completed | failed | cancelled | timeout): its
   * messages and final row (through the durable writes: a database outage keeps them for later,
   * and does not hold the done back), its tenant slot (given back before the done goes out, so a
   * client that sends its next chat on the done is admitted), then its done.
   * @returns the done's append: `fenced` when another worker owns the run, `sealed` when it had ended.
   */
  async finish(run: RunRef, epoch: number, end: RunEnd): Promise<AppendResult> {
    const { log, durable, logger } = this.ports;
    const finish: RunFinish = { runId: run.runId, sessionId: run.sessionId, status: final(run.runId, 'running', end.status), ...(end.error === undefined ? {} : { error: end.error }), messages: end.messages };
    try {
      if (!(await durable.run(`finish run ${run.runId}`, () => this.finishes.add(finish)))) {
        logger.warn({ run_id: run.runId }, 'database unreachable: the answer is kept and stored once it is back');
      }
    } catch (err) {
      logger.error({ run_id: run.runId, err }, "could not store the run's end; its done goes out anyway");
    }
    await this.releaseSlot(run);
    await this.releaseBudgets(run);
    const envelope = { sessionId: run.sessionId, runId: run.runId };
    if (end.closeCall) await log.append(new ToolResultEvent(envelope, end.closeCall, { error: 'Cancelled' }, 'cancelled').toDict(), epoch, true);
    // A question that expired ends the run as a rejection does: not completed, and saying why.
    const stopped = end.status === 'cancelled' || end.status === 'timeout';
    return log.append(new DoneEvent(envelope, stopped, stopped ? (end.reason ?? end.status) : end.reason, end.usage).toDict(), epoch);
  }

  /**
   * The reaper's end of a run that no worker holds and whose row is still active (→ its final
   * state). A run whose done went out but whose final write did not land gets the status its
   * log says. Any other is lost: `error{run_lost}` and its done, fenced against a worker that
   * still believes it holds it; its log archived here; its row `lost`.
   * @returns whether this call ended the row.
   */
  async reap(run: RunRecord, jobState: string): Promise<boolean> {
    const { log, ledger, rows } = this.ports;
    const envelope = { sessionId: run.sessionId, runId: run.runId };
    if (await log.isSealed(run.runId)) {
      const events = await log.range(run.runId, 0);
      const done = events.findLast((e: EventDict) => e.event_type === 'done');
      // A busy LLM's error is recoverable for the client (send it again later), yet the run failed:
      // only a worker's hand-over is no failure.
      const failed = events.some((e) => e.event_type === 'error' && e.error_code !== 'worker_lost');
      const status = done?.reason === 'timeout' ? 'timeout' : done?.cancelled ? 'cancelled' : failed ? 'failed' : 'completed';
      // A run whose start never reached its row (still queued) ran all the same: it moves through running, as the table has it.
      let from = run.status;
      if (!canMove(from, status) && canMove(from, 'running') && canMove('running', status)) {
        await rows.runs.markStarted(run.runId);
        from = 'running';
      }
      const marked = await this.endRow(run.runId, [from], status, failed ? 'ended before its final write' : undefined);
      await this.releaseSlot(run);
      await this.releaseBudgets(run);
      return marked;
    }
    const epoch = await ledger.claim(run.runId);
    const ended = await log.append(new ErrorEvent(envelope, 'This turn stopped without finishing and was ended; send it again', false, 'run_lost').toDict(), epoch);
    if (ended.status === 'fenced') return false;
    await log.append(new DoneEvent(envelope, false).toDict(), epoch);
    await this.archive(run.runId);
    const marked = await this.endRow(run.runId, [run.status], 'lost', `no worker holds it (job ${jobState})`);
    await this.releaseSlot(run);
    await this.releaseBudgets(run);
    return marked;
  }

  /** Gives back what the run still holds on its budgets; a failure leaves it until the counters expire with their period. */
  private async releaseBudgets(run: Pick<RunRef, 'runId' | 'tenantId'>): Promise<void> {
    await this.ports.budgets.release(run).catch((err: unknown) => this.ports.logger.warn({ run_id: run.runId, err }, "could not give back the run's budget reservations"));
  }

  /** One run's final rows, alone: messages it stored before (a retry) are kept; messages that cannot be stored end it failed. */
  private async finishOne(finish: RunFinish): Promise<void> {
    const { rows, databaseUnavailable, logger } = this.ports;
    let { status, error } = finish;
    try {
      await rows.messages.append(finish.messages);
    } catch (err) {
      if (databaseUnavailable(err)) throw err;
      if (!isDuplicateKey(err)) {
        logger.error({ run_id: finish.runId, err }, "could not store the run's messages");
        [status, error] = ['failed', 'The answer could not be stored'];
      }
    }
    // Independent rows: written side by side.
    await Promise.all([rows.runs.markFinished(finish.runId, status, error), rows.sessions.update(finish.sessionId, { lastActiveAt: new Date() })]);
  }
}

/**
 * The final state after the move `from` → `to`, through the state table.
 * @throws IllegalRunTransition when the table has no such move.
 */
function final(runId: string, from: RunState, to: FinalRunState): FinalRunState {
  move(runId, from, to);
  return to;
}

/** MySQL's duplicate key (1062): the rows of an earlier attempt whose acknowledgement was lost. */
function isDuplicateKey(err: unknown): boolean {
  const e = err as { errno?: number; driverError?: { errno?: number } };
  return e?.errno === 1062 || e?.driverError?.errno === 1062;
}
