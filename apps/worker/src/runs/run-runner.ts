import { createHash } from 'node:crypto';
import { DoneEvent, ErrorEvent, RunStartedEvent, type EventDict, type ExecutionEvent } from '#core/events/execution-event.js';
import type { AgentFactory } from '#core/engine/agent-factory.js';
import { isHandoff, RunHandoff, type ParkedWait, type RunJournal } from '#core/engine/run-journal.js';
import { provideRunTools, type RunToolProvider, type RunTools } from '#core/engine/run-tools.js';
import { AUTO_APPROVE, REFUSE_APPROVALS, type HitlHandler } from '#core/hitl/hitl-handler.js';
import type { ChatMessage, ChatModel } from '#core/llm/chat-model.js';
import type { Caller } from '#core/auth/caller.js';
import { applyFeatures } from '#core/tenants/feature-gate.js';
import { FeatureSwitch, type TenantDirectory } from '#core/tenants/tenant-directory.js';
import type { RunMeter, RunMetrics } from '../metrics/run-metrics.js';
import type { RunTrace, RunTraces } from '../tracing/run-traces.js';
import type { ConversationStore } from '#core/session/session-store.js';
import type { RunJobData } from '#transport/run-queue.js';
import type { RunEventLog } from '#transport/run-event-log.js';
import type { RunEnd, RunLifecycle, RunRef } from '#transport/run-lifecycle.js';
import { isRedisUnavailable } from '#transport/redis-connection.js';
import { RunFencedError, type RunLedger, type TakenRun } from '#transport/run-ledger.js';
import type { EventArchiver } from './event-archiver.js';
import { loadHistory, toNewMessage } from './history.js';

export interface RunRunnerDeps {
  store: ConversationStore;
  log: RunEventLog;
  /** The only writer of the run's states, row, done and tenant slot; wakes a run that waits behind an earlier run of its session. */
  lifecycle: RunLifecycle;
  /** Ownership, recorded steps and tool intents of runs. */
  ledger: RunLedger;
  archiver: EventArchiver;
  agents: AgentFactory;
  workerId: string;
  /** Builds the HITL handler for one run's caller, which parks the run through `park`; absent: everything is approved. */
  hitlFor?: (caller: Caller, park: (wait: ParkedWait) => void) => HitlHandler;
  /** Each run's part of its trace (off: no spans). */
  traces?: RunTraces;
  /** Each run's part of the worker's metrics (absent: none recorded). */
  metrics?: RunMetrics;
  /** Equip each run with more tools and middleware (memory, MCP servers); released when it ends. */
  toolProviders?: RunToolProvider[];
  /** UTF-8 bytes of earlier conversation a run gets (DATAAGENT_HISTORY_MAX_BYTES). */
  historyMaxBytes: number;
  /** Tenants' feature switches (multi-tenant mode); absent: everything is on. */
  tenants?: TenantDirectory;
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

type FinalStatus = RunEnd['status'];

/**
 * What became of a job: ended; handed back to the queue to continue on another worker (drain);
 * lost to another worker that took it over (this worker lost its lock or was fenced off); or
 * parked: it waits for a person, holding no worker, until the wait's answer or expiry.
 */
export type RunOutcome = 'finished' | 'handed_back' | 'lost' | { parked: ParkedWait };

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

  constructor(private readonly deps: RunRunnerDeps) {}

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
    const { store, log, ledger, archiver, agents, workerId, logger, lifecycle } = this.deps;
    const envelope = { sessionId: job.sessionId, runId: job.runId };
    const ref: RunRef = { runId: job.runId, sessionId: job.sessionId, tenantId: job.tenantId };
    // A run that waits for earlier ones is looked at first; any other learns it in the take below.
    if (job.afterRuns?.length && (await log.isSealed(job.runId))) {
      logger.info({ run_id: job.runId }, 'run already finished; skipping');
      await lifecycle.released(ref);
      return 'finished';
    }
    const controller = new AbortController();
    const entry: ActiveRun = { controller, waiting: 0 };
    this.active.set(job.runId, entry);
    if (job.afterRuns?.length) {
      // Its events must not interleave with the earlier runs': it starts on their done. A cancel
      // (control message or record) ends the wait, and the run then ends cancelled below.
      try {
        await lifecycle.waitForDone(job.sessionId, job.afterRuns, controller.signal, (runId) => this.earlierRunEnded(runId), () => log.isCancelRequested(job.runId));
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
    /** Set once the run has its done (or is found to have one): nothing more of it to end here. */
    let ended = false;
    /** A parked run continued: the events it sent before parking, which the engine's replay of its turn sends again, are not sent twice. */
    let resent: EventDict[] = [];
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
      if (event instanceof DoneEvent) throw new Error("a run's done is the lifecycle's to write");
      const dict = event.toDict();
      const again = replayed(resent, dict);
      if (again) return again;
      resent = [];
      const result = await handOffOn(() => log.append(dict, epoch));
      if (result.status === 'appended') {
        lastSeq = result.event.seq;
        if (archive) archiver.add(result.event);
        return result.event;
      }
      if (result.status === 'sealed') sealed = true;
      controller.abort(result.status === 'fenced' ? new RunHandoff('fenced') : new Error(result.status));
      return null;
    };
    /** Ends the run through the lifecycle: its row, its slot, its done (→ completed | failed | cancelled). */
    const end = async (how: FinalStatus, options: Pick<RunEnd, 'reason' | 'closeCall'> = {}): Promise<void> => {
      ended = true;
      // Ids derived from the run and position, so a retry after a lost acknowledgement, or the
      // worker that continues a run whose worker died while storing it, finds its rows instead of doubling them.
      const messages = how === 'cancelled' ? [] : added.map((m, i) => ({ ...toNewMessage(m, job.sessionId, job.runId), messageId: messageIdFor(job.runId, i) }));
      const result = await handOffOn(() => lifecycle.finish(ref, epoch, { status: how, ...options, ...(failure === undefined ? {} : { error: failure }), messages }));
      if (result.status === 'appended') archiver.add(result.event);
      else if (result.status === 'fenced') controller.abort(new RunHandoff('fenced'));
    };
    const handedOff = () => isHandoff(controller.signal);

    try {
      // Its done, its ownership, its log and recorded steps, in one round trip.
      const taken = await handOffOn(() => ledger.take(job.runId));
      if (taken.sealed) {
        logger.info({ run_id: job.runId }, 'run already finished; skipping');
        endedElsewhere = ended = true;
        await lifecycle.released(ref);
        return 'finished';
      }
      epoch = taken.epoch;
      const { events: earlier, steps } = taken;
      const startedBefore = earlier.find((e) => e.event_type === 'run_started');
      const quiet = isQuietContinuation(taken);
      // Archived below with the events before it, in seq order: the archive keeps only events
      // after the highest seq it holds, so a flush of run_started alone would lose run_queued.
      let first: EventDict | null = null;
      if (quiet) {
        // A parked run whose wait is over: it goes on where it stopped, and the client sees nothing of the move.
        lastSeq = earlier.at(-1)?.seq ?? 0;
        resent = earlier.filter((e) => e.seq > (steps.at(-1)?.seq ?? startedBefore?.seq ?? 0));
        logger.info({ run_id: job.runId, epoch, parked_at_seq: lastSeq }, 'continuing a parked run');
        if (taken.cancelled) {
          status = 'cancelled';
          await end('cancelled', { closeCall: taken.parked?.toolCallId });
          return 'finished';
        }
      } else if (!startedBefore) {
        first = await publish(new RunStartedEvent(envelope, workerId), false);
        if (first) meter?.started();
      } else {
        const resumeAfter = steps.at(-1)?.seq ?? startedBefore.seq;
        logger.warn({ run_id: job.runId, epoch, resume_after_seq: resumeAfter, steps: steps.length }, 'continuing a run whose worker stopped');
        first = await publish(new ErrorEvent(envelope, 'The worker running this turn stopped; it continues here from its last recorded step', true, 'worker_lost', resumeAfter), false);
      }
      if (!first && !quiet) {
        if (sealed) {
          endedElsewhere = ended = true;
          await lifecycle.released(ref);
          return 'finished';
        }
        if (handedOff()) return 'lost';
        status = 'cancelled';
        await end('cancelled');
        return 'finished';
      }
      // The gateway's run_queued (and, on a takeover, what the archive may not hold yet) is archived with this worker's events.
      for (const event of first ? [...earlier, first] : earlier) archiver.add(event);
      const [, history] = await Promise.all([lifecycle.start(job.runId), job.firstTurn ? [] : loadHistory(store.messages, job.sessionId, job.runId, this.deps.historyMaxBytes)]);
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
      const park = (wait: ParkedWait) => controller.abort(new RunHandoff('park', wait));
      const hitl = job.approvals === 'refuse' ? REFUSE_APPROVALS : job.approvals === 'approve' ? AUTO_APPROVE : this.deps.hitlFor?.(caller, park);
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
          await end(status, { reason: cancelled === event.cancelled ? event.reason : 'cancelled' });
          break;
        }
        await publish(event);
        if (sealed) break;
      }
      if (handedOff()) return await this.handOff(job, ref, epoch, lastSeq, controller.signal.reason as RunHandoff);
    } catch (err) {
      if (handedOff()) return this.handOff(job, ref, epoch, lastSeq, controller.signal.reason as RunHandoff);
      // The engine never throws; this is the store or Redis failing around it.
      logger.error({ run_id: job.runId, err }, 'run failed outside the engine');
      status = 'failed';
      failure = err instanceof Error ? err.message : String(err);
      if (!ended) {
        await publish(new ErrorEvent(envelope, 'Internal error while running the agent', false, 'internal_error')).catch(() => undefined);
        await end('failed').catch(() => undefined);
      }
    } finally {
      runTrace?.end(handedOff() ? 'handed_off' : status, failure);
      meter?.end(handedOff() || endedElsewhere ? 'handed_off' : status);
      this.active.delete(job.runId);
      await equipped?.release().catch((err: unknown) => logger.warn({ run_id: job.runId, err }, "could not release the run's tools"));
      await archiver.flushRun(job.runId);
      if (!handedOff()) {
        if (!ended) await lifecycle.released(ref);
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

  /**
   * What a run that stops here without ending becomes. A parked run records its wait through
   * the lifecycle (→ waiting) before its job leaves: a worker that takes it later continues it
   * quietly. Recording fails when another worker owns the run (lost) or Redis is out of reach
   * (handed back: it continues from its ledger, and asks again).
   */
  private async handOff(job: RunJobData, ref: RunRef, epoch: number, lastSeq: number, reason: RunHandoff): Promise<RunOutcome> {
    if (reason.why === 'park' && reason.wait) {
      try {
        await this.deps.lifecycle.park(ref, epoch, reason.wait, lastSeq);
        return { parked: reason.wait };
      } catch (err) {
        if (err instanceof RunFencedError) return this.handOffOutcome(job, new RunHandoff('fenced'));
        this.deps.logger.warn({ run_id: job.runId, err }, 'could not park the run; handing it back to the queue');
        return 'handed_back';
      }
    }
    return this.handOffOutcome(job, reason);
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

/** Whether the run was parked and nothing happened to it since: it continues without telling the client anything. */
function isQuietContinuation(taken: Extract<TakenRun, { sealed: false }>): boolean {
  return taken.parked !== undefined && taken.parked.seq === (taken.events.at(-1)?.seq ?? 0);
}

/** An event's identity for replay: what it says, not when it was made. */
function sameEvent(a: EventDict, b: EventDict): boolean {
  const strip = ({ seq: _seq, timestamp: _at, expires_at: _expires, ...rest }: EventDict & { expires_at?: string }) => JSON.stringify(rest);
  return strip(a) === strip(b);
}

/**
 * Whether `dict` is the next of the events a continued parked run sent before it parked (the
 * engine replays its turn and sends them again): then it is that event, as the log has it, and
 * leaves `resent`. A question that is not asked again (it was answered) is passed over.
 */
function replayed(resent: EventDict[], dict: EventDict): EventDict | null {
  while (resent.length > 0 && resent[0]!.event_type === 'hitl_request' && dict.event_type !== 'hitl_request') resent.shift();
  if (resent.length > 0 && sameEvent(resent[0]!, dict)) return resent.shift()!;
  return null;
}
