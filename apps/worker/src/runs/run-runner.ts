import { randomUUID } from 'node:crypto';
import { DoneEvent, ErrorEvent, RunStartedEvent, type EventDict, type ExecutionEvent } from '#core/events/execution-event.js';
import type { AgentConfig } from '#core/engine/agent-config.js';
import type { AgentFactory } from '#core/engine/agent-factory.js';
import type { HitlHandler } from '#core/hitl/hitl-handler.js';
import type { ChatMessage } from '#core/llm/chat-model.js';
import type { Caller } from '#core/session/caller.js';
import type { ConversationStore, RunStatus } from '#core/session/session-store.js';
import { isDatabaseUnavailable } from '#persistence/connection-errors.js';
import type { RunJobData } from '#transport/run-queue.js';
import type { RunEventLog } from '#transport/run-event-log.js';
import type { EventArchiver } from './event-archiver.js';
import type { PendingWrites } from './pending-writes.js';
import { loadHistory, toNewMessage } from './history.js';

export interface RunRunnerDeps {
  store: ConversationStore;
  log: RunEventLog;
  archiver: EventArchiver;
  agents: AgentFactory;
  workerId: string;
  /** Builds the HITL handler for one run's caller; absent: everything is approved. */
  hitlFor?: (caller: Caller) => HitlHandler;
  /** Per-run additions to the assistant (the caller's memory), given its base config. */
  perRun?: (caller: Caller, base: AgentConfig) => Partial<AgentConfig>;
  /** Writes kept for a database that cannot be reached. */
  pendingWrites: PendingWrites;
  /** UTF-8 bytes of earlier conversation a run gets (DATAAGENT_HISTORY_MAX_BYTES). */
  historyMaxBytes: number;
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

type FinalStatus = Exclude<RunStatus, 'queued' | 'running'>;

/** What became of a job: done, or to be retried later (an earlier run of its session is still active). */
export type RunOutcome = 'finished' | 'deferred';

/**
 * Executes one run: announces it, rebuilds the conversation, streams the agent's events
 * into the run's log, and stores the new messages before the run's `done` goes out, so a
 * client that sees `done` can read the history at once. A cancel (control message or the
 * cancel record met at any append) aborts the model stream and tools in flight.
 */
export class RunRunner {
  private readonly active = new Map<string, AbortController>();

  constructor(private readonly deps: RunRunnerDeps) {}

  get activeCount(): number {
    return this.active.size;
  }

  /** Aborts a run held by this worker. Returns false when it holds no such run. */
  abort(runId: string, reason = 'cancelled'): boolean {
    const controller = this.active.get(runId);
    if (!controller) return false;
    controller.abort(new Error(reason));
    return true;
  }

  async run(job: RunJobData): Promise<RunOutcome> {
    const { store, log, archiver, agents, workerId, logger } = this.deps;
    const envelope = { sessionId: job.sessionId, runId: job.runId };
    if (await log.isSealed(job.runId)) {
      logger.info({ run_id: job.runId }, 'run already finished; skipping');
      return 'finished';
    }
    if (job.afterRuns?.length && !(await log.isCancelRequested(job.runId)) && !(await this.earlierRunsDone(job.afterRuns))) return 'deferred';
    const controller = new AbortController();
    this.active.set(job.runId, controller);
    const caller: Caller = { tenantId: job.tenantId, userId: job.userId, role: 'user' };
    const added: ChatMessage[] = [];
    let status: FinalStatus = 'completed';
    let failure: string | undefined;
    let sealed = false;

    const publish = async (event: ExecutionEvent, archive = true): Promise<EventDict | null> => {
      const result = await log.append(event.toDict());
      if (result.status === 'appended') {
        if (archive) archiver.add(result.event);
        return result.event;
      }
      if (result.status === 'sealed') sealed = true;
      controller.abort(new Error(result.status));
      return null;
    };

    try {
      // Archived below with the events before it, in seq order: the archive keeps only events
      // after the highest seq it holds, so a flush of run_started alone would lose run_queued.
      const started = await publish(new RunStartedEvent(envelope, workerId), false);
      if (!started && sealed) return 'finished';
      const [, history, earlier] = await Promise.all([
        store.runs.markStarted(job.runId),
        loadHistory(store.messages, job.sessionId, job.runId, this.deps.historyMaxBytes),
        log.range(job.runId, 0),
      ]);
      // The gateway's run_queued is archived with the worker's events.
      for (const event of earlier) if (started && event.seq <= started.seq) archiver.add(event);
      if (started && earlier.some((e) => e.event_type === 'run_started' && e.seq < started.seq)) {
        logger.warn({ run_id: job.runId }, 'restarting a run whose worker stopped');
        await publish(new ErrorEvent(envelope, 'The worker running this turn stopped; it starts again from the beginning', true, 'worker_lost'));
      }
      const base = agents.get(job.assistantId);
      const executor = agents.create(job.assistantId, {
        ...(base && this.deps.perRun ? this.deps.perRun(caller, base) : {}),
        ...(this.deps.hitlFor ? { hitl: this.deps.hitlFor(caller) } : {}),
      });
      const events = executor.execute(job.message, job.sessionId, {
        runId: job.runId,
        caller,
        history,
        signal: controller.signal,
        onMessage: (m) => added.push(m),
      });
      for await (const event of events) {
        if (event instanceof ErrorEvent) {
          status = 'failed';
          failure = event.error;
        }
        if (event instanceof DoneEvent) {
          const cancelled = event.cancelled || controller.signal.aborted;
          if (cancelled) status = 'cancelled';
          await this.finish(job, status, failure, added);
          await publish(cancelled === event.cancelled ? event : new DoneEvent(envelope, true, 'cancelled'));
          break;
        }
        await publish(event);
        if (sealed) break;
      }
    } catch (err) {
      // The engine never throws; this is the store or Redis failing around it.
      logger.error({ run_id: job.runId, err }, 'run failed outside the engine');
      failure = err instanceof Error ? err.message : String(err);
      await this.finish(job, 'failed', failure, added).catch(() => undefined);
      await publish(new ErrorEvent(envelope, 'Internal error while running the agent', false, 'internal_error')).catch(() => undefined);
      await publish(new DoneEvent(envelope, false)).catch(() => undefined);
    } finally {
      this.active.delete(job.runId);
      await archiver.flushRun(job.runId);
      await this.purgeIfSessionDeleted(job);
    }
    return 'finished';
  }

  /**
   * Whether the runs this one queued behind have ended: their done is in the log (the run
   * row turns final just before the done goes out, so the log is what orders the events).
   * A run whose log has expired counts as ended once its row is final.
   */
  private async earlierRunsDone(runIds: string[]): Promise<boolean> {
    const { log, store } = this.deps;
    for (const runId of runIds) {
      if (await log.isSealed(runId)) continue;
      if ((await log.lastSeq(runId)) === 0) {
        const run = await store.runs.get(runId);
        if (!run || (run.status !== 'queued' && run.status !== 'running')) continue;
      }
      return false;
    }
    return true;
  }

  /**
   * A session deleted while its run still wrote would keep that run's late rows forever:
   * once everything of the run is written, they go too.
   */
  private async purgeIfSessionDeleted(job: RunJobData): Promise<void> {
    const { store, archiver, logger } = this.deps;
    try {
      // A periodic flush may still be writing this run's earlier events.
      await archiver.idle();
      if (await store.sessions.get(job.sessionId)) return;
      if (await store.runs.purgeIfOrphaned(job.runId, job.sessionId)) logger.info({ run_id: job.runId }, 'session deleted during its run; purged the run');
    } catch (err) {
      logger.warn({ run_id: job.runId, err }, 'could not check for a deleted session');
    }
  }

  /**
   * Stores the run's messages and ends its row. The row ends even when the messages cannot be
   * stored (or the session would stay busy), and a database that cannot be reached gets the
   * writes later, in order (PendingWrites): the run's done does not wait for it.
   */
  private async finish(job: RunJobData, status: FinalStatus, failure: string | undefined, added: ChatMessage[]): Promise<void> {
    const { store, logger, pendingWrites } = this.deps;
    // Ids fixed now, so a retry after a lost acknowledgement finds its rows instead of doubling them.
    const messages = status === 'cancelled' ? [] : added.map((m) => ({ ...toNewMessage(m, job.sessionId, job.runId), messageId: randomUUID() }));
    let appended = messages.length === 0;
    const write = async () => {
      if (!appended) {
        try {
          await store.messages.append(messages);
        } catch (err) {
          if (isDatabaseUnavailable(err)) throw err;
          if (!isDuplicateKey(err)) {
            logger.error({ run_id: job.runId, err }, "could not store the run's messages");
            [status, failure] = ['failed', 'The answer could not be stored'];
          }
        }
        appended = true;
      }
      await store.runs.markFinished(job.runId, status, failure);
      await store.sessions.update(job.sessionId, { lastActiveAt: new Date() });
    };
    if (!(await pendingWrites.run(`finish run ${job.runId}`, write))) {
      logger.warn({ run_id: job.runId }, 'database unreachable: the answer is kept and stored once it is back');
    }
  }
}

/** MySQL's duplicate key (1062): the rows of an earlier attempt whose acknowledgement was lost. */
function isDuplicateKey(err: unknown): boolean {
  const e = err as { errno?: number; driverError?: { errno?: number } };
  return e?.errno === 1062 || e?.driverError?.errno === 1062;
}
