import { createHash } from 'node:crypto';
import { DoneEvent, ErrorEvent, RunStartedEvent, type EventDict, type ExecutionEvent } from '#core/events/execution-event.js';
import type { AgentFactory } from '#core/engine/agent-factory.js';
import { isHandoff, RunHandoff, type RunJournal } from '#core/engine/run-journal.js';
import { provideRunTools, type RunToolProvider, type RunTools } from '#core/engine/run-tools.js';
import { AUTO_APPROVE, REFUSE_APPROVALS, type HitlHandler } from '#core/hitl/hitl-handler.js';
import type { ChatMessage, ChatModel } from '#core/llm/chat-model.js';
import type { Caller } from '#core/auth/caller.js';
import { applyFeatures } from '#core/tenants/feature-gate.js';
import { FeatureSwitch, type TenantDirectory } from '#core/tenants/tenant-directory.js';
import type { RunMeter, RunMetrics } from '../metrics/run-metrics.js';
import type { RunTrace, RunTraces } from '../tracing/run-traces.js';
import type { ConversationStore, RunFinish, RunStatus } from '#core/session/session-store.js';
import { GroupCommit } from '#core/util/group-commit.js';
import { isDatabaseUnavailable } from '#persistence/connection-errors.js';
import type { RunJobData } from '#transport/run-queue.js';
import type { RunEventLog } from '#transport/run-event-log.js';
import type { RunLifecycle } from '#transport/run-lifecycle.js';
import { isRedisUnavailable } from '#transport/redis-connection.js';
import { RunFencedError, type RunLedger } from '#transport/run-ledger.js';
import type { TenantRunSlots } from '#transport/tenant-run-slots.js';
import type { EventArchiver } from './event-archiver.js';
import type { PendingWrites } from './pending-writes.js';
import { loadHistory, toNewMessage } from './history.js';

export interface RunRunnerDeps {
  store: ConversationStore;
  log: RunEventLog;
  /** Wakes a run that waits behind an earlier run of its session on that run's done. */
  lifecycle: RunLifecycle;
  /** Ownership, recorded steps and tool intents of runs. */
  ledger: RunLedger;
  archiver: EventArchiver;
  agents: AgentFactory;
  workerId: string;
  /** Builds the HITL handler for one run's caller; absent: everything is approved. */
  hitlFor?: (caller: Caller) => HitlHandler;
  /** Each run's part of its trace (off: no spans). */
  traces?: RunTraces;
  /** Each run's part of the worker's metrics (absent: none recorded). */
  metrics?: RunMetrics;
  /** Equip each run with more tools and middleware (memory, MCP servers); released when it ends. */
  toolProviders?: RunToolProvider[];
  /** Writes kept for a database that cannot be reached. */
  pendingWrites: PendingWrites;
  /** UTF-8 bytes of earlier conversation a run gets (DATAAGENT_HISTORY_MAX_BYTES). */
  historyMaxBytes: number;
  /** Tenants' feature switches (multi-tenant mode); absent: everything is on. */
  tenants?: TenantDirectory;
  /** Tenants' concurrent-run slots: a run gives its slot back when it ends here. */
  runSlots?: TenantRunSlots;
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

type FinalStatus = Exclude<RunStatus, 'queued' | 'running'>;

/**
 * What became of a job: ended; handed back to the queue to continue on another worker (drain);
 * or lost to another worker that took it over (this worker lost its lock or was fenced off).
 */
export type RunOutcome = 'finished' | 'handed_back' | 'lost';

interface ActiveRun {
  controller: AbortController;
  /** Approvals this run is waiting for now. */
  waiting: number;
}

/**
 * Executes one run: announces it, rebuilds the conversation, streams the agent's events
 * into the run's log, and stores the new messages before the run's `done` goes out, so a
 * client that sees `done` can read the history at once. A cancel (control message or the
 * cancel record met at any append) aborts the model stream and tools in flight.
 *
 * Every run is owned through the ledger: each step the agent records, each tool intent and
 * each event append carries this worker's epoch, so once another worker takes the run over,
 * this one stops at its next write. A run taken over continues from its last recorded step
 * after one recoverable `error{worker_lost}`.
 */
export class RunRunner {
  private readonly active = new Map<string, ActiveRun>();
  private draining = false;
  /**
   * Runs' rows are written in groups, as the gateway writes submissions: the runs that start (or
   * end) while one group is written go in the next, so a burst costs a few statements, not a
   * few per run. A group that fails is written run by run, so a run whose rows cannot be written
   * fails alone.
   */
  private readonly starts: GroupCommit<string>;
  private readonly finishes: GroupCommit<RunFinish>;

  constructor(private readonly deps: RunRunnerDeps) {
    const { store } = deps;
    this.starts = new GroupCommit((runIds) => (runIds.length === 1 ? store.runs.markStarted(runIds[0]!) : store.submissions.startMany(runIds)));
    this.finishes = new GroupCommit((finishes) => (finishes.length === 1 ? this.finishOne(finishes[0]!) : store.submissions.finishMany(finishes)));
  }

  get activeCount(): number {
    return this.active.size;
  }

  /** Aborts a run held by this worker. Returns false when it holds no such run. */
  abort(runId: string, reason: unknown = new Error('cancelled')): boolean {
    const run = this.active.get(runId);
    if (!run) return false;
    run.controller.abort(reason);
    return true;
  }

  /**
   * Cancels a run held by this worker (a control message).
   * @param requestedAt When the gateway took the cancel (epoch ms), for the cancel latency.
   * @returns false when it holds no such run.
   */
  cancel(runId: string, requestedAt?: number): boolean {
    if (!this.active.has(runId)) return false;
    this.deps.metrics?.cancelRequested(runId, requestedAt);
    return this.abort(runId);
  }

  /**
   * Stops taking part: runs waiting for approval are handed back at once (and any that starts
   * waiting later), so they continue on another worker instead of holding this one.
   */
  startDrain(): void {
    this.draining = true;
    for (const [runId, run] of this.active) if (run.waiting > 0) this.abort(runId, new RunHandoff('drain'));
  }

  /** Hands every run still here back to the queue (the drain deadline). */
  handBackAll(): void {
    for (const runId of this.active.keys()) this.abort(runId, new RunHandoff('drain'));
  }

  async run(job: RunJobData): Promise<RunOutcome> {
    const { store, log, ledger, archiver, agents, workerId, logger } = this.deps;
    const envelope = { sessionId: job.sessionId, runId: job.runId };
    // A run that waits for earlier ones is looked at first; any other learns it in the take below.
    if (job.afterRuns?.length && (await log.isSealed(job.runId))) {
      logger.info({ run_id: job.runId }, 'run already finished; skipping');
      await this.deps.runSlots?.release(job.tenantId, job.runId).catch(() => undefined);
      return 'finished';
    }
    const controller = new AbortController();
    const entry: ActiveRun = { controller, waiting: 0 };
    this.active.set(job.runId, entry);
    if (job.afterRuns?.length) {
      // Its events must not interleave with the earlier runs': it starts on their done. A cancel
      // (control message or record) ends the wait, and the run then ends cancelled below.
      try {
        await this.deps.lifecycle.waitForDone(job.sessionId, job.afterRuns, controller.signal, (runId) => this.earlierRunEnded(runId), () => log.isCancelRequested(job.runId));
      } catch (err) {
        if (!controller.signal.aborted) {
          this.active.delete(job.runId);
          throw err;
        }
        if (isHandoff(controller.signal)) {
          this.active.delete(job.runId);
          return this.handOffOutcome(job, controller.signal.reason as RunHandoff);
        }
      }
    }
    const caller: Caller = { tenantId: job.tenantId, userId: job.userId, role: 'user', ...(job.apiKeyId ? { keyId: job.apiKeyId } : {}) };
    const added: ChatMessage[] = [];
    let status: FinalStatus = 'completed';
    let failure: string | undefined;
    let sealed = false;
    let lastSeq = 0;
    let epoch = 0;
    let equipped: RunTools | undefined;
    const runTrace = this.deps.traces?.start(job);
    const meter = this.deps.metrics?.start(job);
    /** The run had its done before this worker did anything (another ended it): nothing of it to count here. */
    let endedElsewhere = false;

    // Redis out of reach (past the command timeout) or another owner: the run stops here and
    // continues elsewhere (or here, later) from its ledger, instead of failing.
    const handOffOn = async <T>(write: () => Promise<T>): Promise<T> => {
      try {
        return await write();
      } catch (err) {
        if (err instanceof RunFencedError) controller.abort(new RunHandoff('fenced'));
        else if (isRedisUnavailable(err)) controller.abort(new RunHandoff('redis_unavailable'));
        throw err;
      }
    };
    const publish = async (event: ExecutionEvent, archive = true): Promise<EventDict | null> => {
      const result = await handOffOn(() => log.append(event.toDict(), epoch));
      if (result.status === 'appended') {
        lastSeq = result.event.seq;
        if (archive) archiver.add(result.event);
        return result.event;
      }
      if (result.status === 'sealed') sealed = true;
      controller.abort(result.status === 'fenced' ? new RunHandoff('fenced') : new Error(result.status));
      return null;
    };
    const handedOff = () => isHandoff(controller.signal);
    let slotReleased = false;
    const releaseSlot = async () => {
      if (slotReleased) return;
      slotReleased = true;
      await this.deps.runSlots?.release(job.tenantId, job.runId).catch((err: unknown) => logger.warn({ run_id: job.runId, err }, "could not give back the run's tenant slot; gateways prune it later"));
    };

    try {
      // Its done, its ownership, its log and recorded steps, in one round trip.
      const taken = await handOffOn(() => ledger.take(job.runId));
      if (taken.sealed) {
        logger.info({ run_id: job.runId }, 'run already finished; skipping');
        endedElsewhere = true;
        return 'finished';
      }
      epoch = taken.epoch;
      const { events: earlier, steps } = taken;
      const startedBefore = earlier.find((e) => e.event_type === 'run_started');
      // Archived below with the events before it, in seq order: the archive keeps only events
      // after the highest seq it holds, so a flush of run_started alone would lose run_queued.
      let first: EventDict | null;
      if (!startedBefore) {
        first = await publish(new RunStartedEvent(envelope, workerId), false);
        if (first) meter?.started();
      } else {
        const resumeAfter = steps.at(-1)?.seq ?? startedBefore.seq;
        logger.warn({ run_id: job.runId, epoch, resume_after_seq: resumeAfter, steps: steps.length }, 'continuing a run whose worker stopped');
        first = await publish(new ErrorEvent(envelope, 'The worker running this turn stopped; it continues here from its last recorded step', true, 'worker_lost', resumeAfter), false);
      }
      if (!first) {
        if (sealed) {
          endedElsewhere = true;
          return 'finished';
        }
        if (handedOff()) return 'lost';
        status = 'cancelled';
        return await this.endCancelled(job, publish);
      }
      // The gateway's run_queued (and, on a takeover, what the archive may not hold yet) is archived with this worker's events.
      for (const event of [...earlier, first]) archiver.add(event);
      const [, history] = await Promise.all([this.starts.add(job.runId), job.firstTurn ? [] : loadHistory(store.messages, job.sessionId, job.runId, this.deps.historyMaxBytes)]);
      const journal: RunJournal = {
        resumed: steps,
        step: async (step) => {
          if (handedOff()) throw controller.signal.reason;
          await handOffOn(() => ledger.recordStep(job.runId, epoch, { ...step, seq: lastSeq }));
        },
        intend: async (call, hash) => {
          if (handedOff()) throw controller.signal.reason;
          return handOffOn(() => ledger.intend(job.runId, epoch, call.id, hash, call.name));
        },
      };
      const base = agents.get(job.assistantId);
      const hitl = job.approvals === 'refuse' ? REFUSE_APPROVALS : job.approvals === 'approve' ? AUTO_APPROVE : this.deps.hitlFor?.(caller);
      const features = await this.featuresOf(caller, job.runId);
      equipped = await provideRunTools(this.deps.toolProviders ?? [], {
        caller,
        runId: job.runId,
        sessionId: job.sessionId,
        assistantId: job.assistantId,
        signal: controller.signal,
        ...(runTrace?.traceId ? { traceId: runTrace.traceId } : {}),
        ...(features.allOn ? {} : { features }),
      });
      const executor = agents.create(job.assistantId, {
        // The run's own middleware first: what it decides about the tools (MCP injection) is in place before the tool prompt describes them.
        ...(base
          ? {
              ...applyFeatures(
                [...base.tools, ...equipped.tools],
                [...(runTrace?.middleware ?? []), ...(meter ? [meter.middleware(new Set([...base.tools, ...equipped.tools].map((t) => t.name)))] : []), ...equipped.middleware, ...base.middleware],
                features,
              ),
              model: instrumented(base.model, runTrace, meter),
            }
          : {}),
        ...(hitl ? { hitl: this.tracked(job.runId, entry, hitl) } : {}),
      });
      const events = executor.execute(job.message, job.sessionId, {
        runId: job.runId,
        caller,
        history,
        signal: controller.signal,
        onMessage: (m) => added.push(m),
        journal,
      });
      for await (const event of events) {
        // Handed off: whatever the engine says now (a cancelled result, a done) is not this run's end.
        if (handedOff()) break;
        if (event instanceof ErrorEvent) {
          status = 'failed';
          failure = event.error;
        }
        if (event instanceof DoneEvent) {
          const cancelled = event.cancelled || controller.signal.aborted;
          if (cancelled) status = 'cancelled';
          await this.finish(job, status, failure, added);
          // Given back before the done goes out: a client that sends its next chat on the done is admitted.
          await releaseSlot();
          await publish(cancelled === event.cancelled ? event : new DoneEvent(envelope, true, 'cancelled'));
          break;
        }
        await publish(event);
        if (sealed) break;
      }
      if (handedOff()) return this.handOffOutcome(job, controller.signal.reason as RunHandoff);
    } catch (err) {
      if (handedOff()) return this.handOffOutcome(job, controller.signal.reason as RunHandoff);
      // The engine never throws; this is the store or Redis failing around it.
      logger.error({ run_id: job.runId, err }, 'run failed outside the engine');
      status = 'failed';
      failure = err instanceof Error ? err.message : String(err);
      await this.finish(job, 'failed', failure, added).catch(() => undefined);
      await publish(new ErrorEvent(envelope, 'Internal error while running the agent', false, 'internal_error')).catch(() => undefined);
      await publish(new DoneEvent(envelope, false)).catch(() => undefined);
    } finally {
      runTrace?.end(handedOff() ? 'handed_off' : status, failure);
      meter?.end(handedOff() || endedElsewhere ? 'handed_off' : status);
      this.active.delete(job.runId);
      await equipped?.release().catch((err: unknown) => logger.warn({ run_id: job.runId, err }, "could not release the run's tools"));
      await archiver.flushRun(job.runId);
      if (!handedOff()) {
        await releaseSlot();
        await this.purgeIfSessionDeleted(job);
      }
    }
    return 'finished';
  }

  /**
   * What the caller's tenant may use. Settings that cannot be read (the database is down and
   * this worker never read them) switch everything optional off rather than on.
   */
  private async featuresOf(caller: Caller, runId: string): Promise<FeatureSwitch> {
    if (!this.deps.tenants) return FeatureSwitch.ALL_ON;
    try {
      return (await this.deps.tenants.policy(caller.tenantId)).features;
    } catch (err) {
      this.deps.logger.warn({ run_id: runId, tenant_id: caller.tenantId, err }, "could not read the tenant's settings; the run gets no optional tools");
      return FeatureSwitch.ALL_OFF;
    }
  }

  /** A run cancelled before its first event: it ends with its done. */
  private async endCancelled(job: RunJobData, publish: (event: ExecutionEvent) => Promise<EventDict | null>): Promise<RunOutcome> {
    await this.finish(job, 'cancelled', undefined, []);
    await publish(new DoneEvent({ sessionId: job.sessionId, runId: job.runId }, true, 'cancelled'));
    return 'finished';
  }

  private handOffOutcome(job: RunJobData, reason: RunHandoff): RunOutcome {
    this.deps.logger.warn({ run_id: job.runId, why: reason.why }, reason.why === 'drain' || reason.why === 'redis_unavailable' ? 'run handed back to the queue to continue from its ledger' : 'run taken over by another worker; stopped here');
    return reason.why === 'drain' || reason.why === 'redis_unavailable' ? 'handed_back' : 'lost';
  }

  /** The run's HITL handler, counting the approvals it waits for (a draining worker hands those runs back). */
  private tracked(runId: string, entry: ActiveRun, hitl: HitlHandler): HitlHandler {
    return {
      ...(hitl.open ? { open: (request) => hitl.open!(request) } : {}),
      timeoutMs: hitl.timeoutMs,
      requestApproval: async (...args) => {
        entry.waiting++;
        if (this.draining) this.abort(runId, new RunHandoff('drain'));
        try {
          return await hitl.requestApproval(...args);
        } finally {
          entry.waiting--;
        }
      },
    };
  }

  /**
   * Whether a run this one queued behind has ended: its done is in the log (the run row turns
   * final just before the done goes out, so the log is what orders the events). A run whose log
   * has expired counts as ended once its row is final.
   */
  private async earlierRunEnded(runId: string): Promise<boolean> {
    const { log, store } = this.deps;
    if (await log.isSealed(runId)) return true;
    if ((await log.lastSeq(runId)) > 0) return false;
    const run = await store.runs.get(runId);
    return !run || (run.status !== 'queued' && run.status !== 'running');
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
    const { logger, pendingWrites } = this.deps;
    // Ids derived from the run and position, so a retry after a lost acknowledgement, or the
    // worker that continues a run whose worker died while storing it, finds its rows instead of doubling them.
    const messages = status === 'cancelled' ? [] : added.map((m, i) => ({ ...toNewMessage(m, job.sessionId, job.runId), messageId: messageIdFor(job.runId, i) }));
    const finish: RunFinish = { runId: job.runId, sessionId: job.sessionId, status, ...(failure === undefined ? {} : { error: failure }), messages };
    if (!(await pendingWrites.run(`finish run ${job.runId}`, () => this.finishes.add(finish)))) {
      logger.warn({ run_id: job.runId }, 'database unreachable: the answer is kept and stored once it is back');
    }
  }

  /** One run's final rows, alone: messages it stored before (a retry) are kept; messages that cannot be stored end it failed. */
  private async finishOne(finish: RunFinish): Promise<void> {
    const { store, logger } = this.deps;
    let { status, error } = finish;
    try {
      await store.messages.append(finish.messages);
    } catch (err) {
      if (isDatabaseUnavailable(err)) throw err;
      if (!isDuplicateKey(err)) {
        logger.error({ run_id: finish.runId, err }, "could not store the run's messages");
        [status, error] = ['failed', 'The answer could not be stored'];
      }
    }
    // Independent rows: written side by side.
    await Promise.all([store.runs.markFinished(finish.runId, status, error), store.sessions.update(finish.sessionId, { lastActiveAt: new Date() })]);
  }
}

/** A UUID (version 8, name-based) for the run's i-th message: the same on every attempt of the run. */
export function messageIdFor(runId: string, index: number): string {
  const h = createHash('sha256').update(`${runId}:message:${index}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The run's model with its trace and its metrics around it (either may be off). */
function instrumented(model: ChatModel, trace?: RunTrace, meter?: RunMeter): ChatModel {
  const traced = trace ? trace.model(model) : model;
  return meter ? meter.model(traced) : traced;
}

/** MySQL's duplicate key (1062): the rows of an earlier attempt whose acknowledgement was lost. */
function isDuplicateKey(err: unknown): boolean {
  const e = err as { errno?: number; driverError?: { errno?: number } };
  return e?.errno === 1062 || e?.driverError?.errno === 1062;
}
