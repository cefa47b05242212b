import { DoneEvent, ErrorEvent, RunStartedEvent, UsageEvent, type EventDict } from '#core/events/execution-event.js';
import type { AgentExecutor } from '#core/engine/agent-executor.js';
import type { AgentFactory } from '#core/engine/agent-factory.js';
import { RunHandoff, type ParkedWait } from '#core/engine/run-journal.js';
import { provideRunTools, type RunToolProvider, type RunTools } from '#core/engine/run-tools.js';
import type { ElicitationHandler } from '#core/hitl/elicitation.js';
import { AUTO_APPROVE, REFUSE_APPROVALS, type HitlHandler } from '#core/hitl/hitl-handler.js';
import type { ChatMessage, ChatModel } from '#core/llm/chat-model.js';
import { LlmRequestError } from '#core/llm/llm-request-error.js';
import type { Caller } from '#core/auth/caller.js';
import { applyFeatures } from '#core/tenants/feature-gate.js';
import { FeatureSwitch, type TenantDirectory } from '#core/tenants/tenant-directory.js';
import type { PriceDirectory } from '#core/usage/price-directory.js';
import type { RunMeter, RunMetrics } from '../metrics/run-metrics.js';
import type { RunTrace, RunTraces } from '../tracing/run-traces.js';
import type { ConversationStore } from '#core/session/session-store.js';
import type { WorkerRunLifecycle } from '#core/run/run-lifecycle.js';
import type { EventArchiver } from './event-archiver.js';
import { loadHistory } from './history.js';
import { isQuietContinuation, RunAttempt } from './run-attempt.js';
import { RunFencedError, type RunBudgets, type RunJobData, type RunLedger, type RunLog, type StoredStep, type TakenRun } from '#core/run/run-ports.js';
import type { BudgetDirectory } from '#core/tenants/budget-directory.js';
import { budgetsFor } from '#core/usage/budget.js';
import type { ModelCallBudget } from '#core/usage/call-budget.js';
import { PriceTable } from '#core/usage/price-table.js';

export interface RunRunnerDeps {
  store: ConversationStore;
  log: RunLog;
  /** The only writer of the run's states, row, done and tenant slot; wakes a run that waits behind an earlier run of its session. */
  lifecycle: WorkerRunLifecycle;
  /** Ownership, recorded steps and tool intents of runs. */
  ledger: RunLedger;
  archiver: EventArchiver;
  agents: AgentFactory;
  workerId: string;
  /** Builds the HITL handler for one run's caller, which parks the run through `park`; absent: everything is approved. */
  hitlFor?: (caller: Caller, park: (wait: ParkedWait) => void) => HitlHandler;
  /** Builds the handler that asks one run's person what an MCP server wants to know during a call; absent: nobody is asked. */
  elicitationFor?: (caller: Caller) => ElicitationHandler;
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
  /** The price table in force, each run's model calls priced from it; absent: calls cost nothing. */
  prices?: PriceDirectory;
  /** Tenants' budgets, and the reservations runs' calls make on them; absent: no budgets. */
  budgets?: { directory: BudgetDirectory; counters: RunBudgets };
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

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
    const { log, archiver, logger, lifecycle } = this.deps;
    const attempt = new RunAttempt(job, this.deps);
    // A run that waits for earlier ones is looked at first; any other learns it in the take below.
    if (job.afterRuns?.length && (await log.isSealed(job.runId))) {
      logger.info({ run_id: job.runId }, 'run already finished; skipping');
      await lifecycle.released(attempt.ref);
      return 'finished';
    }
    const entry: ActiveRun = { controller: attempt.controller, waiting: 0 };
    this.active.set(job.runId, entry);
    if (job.afterRuns?.length) {
      // Its events must not interleave with the earlier runs': it starts on their done. A cancel
      // (control message or record) ends the wait, and the run then ends cancelled below.
      try {
        await lifecycle.waitForDone(job.afterRuns, attempt.signal, (runId) => this.earlierRunEnded(runId), () => log.isCancelRequested(job.runId));
      } catch (err) {
        if (!attempt.signal.aborted) {
          this.active.delete(job.runId);
          throw err;
        }
        if (attempt.handedOff) {
          this.active.delete(job.runId);
          return this.handOffOutcome(job, attempt.handoff!);
        }
      }
    }
    const runTrace = this.deps.traces?.start(job);
    const meter = this.deps.metrics?.start(job);
    let equipped: RunTools | undefined;
    try {
      const taken = await attempt.take();
      if (taken.sealed) {
        logger.info({ run_id: job.runId }, 'run already finished; skipping');
        return 'finished';
      }
      // The earlier conversation is read while the run starts.
      const history = job.firstTurn ? Promise.resolve([]) : loadHistory(this.deps.store.messages, job.sessionId, job.runId, this.deps.historyMaxBytes);
      history.catch(() => undefined);
      if (!(await this.open(attempt, taken, meter))) return attempt.handedOff ? 'lost' : 'finished';
      const tools = await this.equip(attempt, job, entry, runTrace, meter);
      equipped = tools.equipped;
      // Told once, as the run starts: a continued or taken-over run has told them already.
      if (attempt.firstStart) {
        for (const notice of equipped.notices ?? []) await attempt.publish(new ErrorEvent(attempt.envelope, notice.message, true, notice.errorCode, undefined, undefined, notice.mcpServer));
      }
      await this.execute(attempt, job, tools.executor, taken.steps, await history, meter);
      if (attempt.handedOff) return await this.handOff(attempt);
    } catch (err) {
      if (attempt.handedOff) return this.handOff(attempt);
      // The engine never throws; this is the store or Redis failing around it.
      logger.error({ run_id: job.runId, err }, 'run failed outside the engine');
      attempt.failure = err instanceof Error ? err.message : String(err);
      attempt.status = 'failed';
      if (!attempt.isOver) {
        await attempt.publish(new ErrorEvent(attempt.envelope, 'Internal error while running the agent', false, 'internal_error')).catch(() => undefined);
        await attempt.end('failed').catch(() => undefined);
      }
    } finally {
      runTrace?.end(attempt.handedOff ? 'handed_off' : attempt.status, attempt.failure);
      meter?.end(attempt.handedOff || attempt.endedElsewhere ? 'handed_off' : attempt.status);
      this.active.delete(job.runId);
      await equipped?.release().catch((err: unknown) => logger.warn({ run_id: job.runId, err }, "could not release the run's tools"));
      await archiver.flushRun(job.runId);
      if (!attempt.handedOff) {
        await attempt.letGo();
        await this.purgeIfSessionDeleted(job);
      }
    }
    return 'finished';
  }

  /**
   * Opens the attempt as the client will see it: a first start sends run_started; a takeover
   * sends error{worker_lost} with where the client's view resumes; a parked run whose wait is
   * over continues quietly (and one cancelled meanwhile ends here, its open call cancelled).
   * @returns false when the attempt is over already (ended, cancelled, or lost to another worker).
   */
  private async open(attempt: RunAttempt, taken: Extract<TakenRun, { sealed: false }>, meter?: RunMeter): Promise<boolean> {
    const { archiver, logger, workerId, lifecycle } = this.deps;
    const { events: earlier, steps } = taken;
    const runId = attempt.ref.runId;
    const startedBefore = earlier.find((e) => e.event_type === 'run_started');
    let first: EventDict | null = null;
    let quiet = false;
    if (isQuietContinuation(taken)) {
      attempt.continueParked(taken);
      logger.info({ run_id: runId, epoch: attempt.ownerEpoch, parked_at_seq: attempt.seq }, 'continuing a parked run');
      if (taken.cancelled) {
        await attempt.end('cancelled', { closeCall: taken.parked?.toolCallId });
        return false;
      }
    } else {
      if (!startedBefore) {
        first = await attempt.publish(new RunStartedEvent(attempt.envelope, workerId), false);
        if (first) meter?.started();
        attempt.firstStart = first !== null;
      } else {
        const resumeAfter = steps.at(-1)?.seq ?? startedBefore.seq;
        logger.warn({ run_id: runId, epoch: attempt.ownerEpoch, resume_after_seq: resumeAfter, steps: steps.length }, 'continuing a run whose worker stopped');
        // worker_lost tells the client which events it has are redone (those after resume_after_seq).
        // When there are none, the run goes on from where the client is and there is nothing to
        // tell: a lock that lapsed as the run began (a worker too busy to renew it takes the run
        // back, or another does) is not shown, and the loss that follows, if any, is told once.
        // `earlier` is the log as it stood when this worker's epoch was raised (one script), and
        // only that epoch writes to it since: the check cannot race another taker.
        if ((earlier.at(-1)?.seq ?? 0) <= resumeAfter) {
          attempt.continueQuietly(earlier);
          quiet = true;
          if (taken.cancelled) {
            await attempt.end('cancelled');
            return false;
          }
        } else {
          first = await attempt.publish(new ErrorEvent(attempt.envelope, 'The worker running this turn stopped; it continues here from its last recorded step', true, 'worker_lost', resumeAfter), false);
        }
      }
      if (!first && !quiet) {
        // Refused: the run ended elsewhere, or another worker owns it, or it was cancelled before it began.
        if (!attempt.foundSealed && !attempt.handedOff) await attempt.end('cancelled');
        return false;
      }
    }
    // Archived with the events before it, in seq order: the archive keeps only events after the
    // highest seq it holds, so a flush of run_started alone would lose run_queued. The gateway's
    // run_queued (and, on a takeover, what the archive may not hold yet) goes with this worker's events.
    for (const event of first ? [...earlier, first] : earlier) archiver.add(event);
    // A run taken over (or continued) gives back what its earlier attempt still held on its budgets.
    await lifecycle.start(attempt.ref, startedBefore !== undefined);
    return true;
  }

  /** The run's tools (built-in, skills, MCP servers, memory), its HITL handler, and the executor that runs the agent with them. */
  private async equip(attempt: RunAttempt, job: RunJobData, entry: ActiveRun, runTrace?: RunTrace, meter?: RunMeter): Promise<{ executor: AgentExecutor; equipped: RunTools }> {
    const { agents } = this.deps;
    const caller = callerOf(job);
    const base = agents.get(job.assistantId);
    const park = (wait: ParkedWait) => attempt.controller.abort(new RunHandoff('park', wait));
    const hitl = job.approvals === 'refuse' ? REFUSE_APPROVALS : job.approvals === 'approve' ? AUTO_APPROVE : this.deps.hitlFor?.(caller, park);
    // Only a run with a person watching it (its approvals are theirs) can answer a server's questions.
    const elicitation = job.approvals === undefined ? this.deps.elicitationFor?.(caller) : undefined;
    const [features, prices] = await Promise.all([this.featuresOf(caller, job.runId), this.deps.prices?.current()]);
    const equipped = await provideRunTools(this.deps.toolProviders ?? [], {
      caller,
      runId: job.runId,
      sessionId: job.sessionId,
      assistantId: job.assistantId,
      signal: attempt.signal,
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
            model: instrumented(logged(base.model, job.runId, this.deps.logger), runTrace, meter),
          }
        : {}),
      ...(hitl ? { hitl: this.tracked(job.runId, entry, hitl) } : {}),
      ...(elicitation ? { elicitation } : {}),
      ...(job.modelOptions ? { modelOptions: job.modelOptions } : {}),
      ...(job.clientTools?.length ? { clientTools: job.clientTools } : {}),
      ...(prices ? { prices: prices.table } : {}),
      // A client may lower the run's token limit, never raise it.
      ...(job.maxRunTokens ? { maxRunTokens: Math.min(job.maxRunTokens, base?.maxRunTokens || Infinity) } : {}),
    });
    return { executor, equipped };
  }

  /** Streams the agent's events into the run's log until its done, which ends the run through the lifecycle. */
  private async execute(attempt: RunAttempt, job: RunJobData, executor: AgentExecutor, steps: StoredStep[], history: ChatMessage[], meter?: RunMeter): Promise<void> {
    const budget = await this.budgetOf(job);
    const events = executor.execute(job.message, job.sessionId, {
      ...(budget ? { budget } : {}),
      runId: job.runId,
      caller: callerOf(job),
      history,
      ...(job.toolResults?.length ? { toolResults: job.toolResults } : {}),
      signal: attempt.signal,
      onMessage: (m) => attempt.added.push(m),
      journal: attempt.journal(steps),
    });
    for await (const event of events) {
      // Handed off: whatever the engine says now (a cancelled result, a done) is not this run's end.
      if (attempt.handedOff) break;
      if (event instanceof ErrorEvent) {
        attempt.status = 'failed';
        attempt.failure = event.error;
      }
      if (event instanceof DoneEvent) {
        const cancelled = event.cancelled || attempt.signal.aborted;
        // A question nobody answered in time ends the run `timeout` (unless a cancel came first).
        const timedOut = event.reason === 'timeout' && !attempt.signal.aborted;
        await attempt.end(timedOut ? 'timeout' : cancelled ? 'cancelled' : attempt.status, { reason: cancelled === event.cancelled ? event.reason : 'cancelled', ...(event.usage ? { usage: event.usage } : {}) });
        break;
      }
      const before = attempt.seq;
      const published = await attempt.publish(event);
      // Counted once, where it is appended: an event a continued run replays is in the log already.
      if (published && published.seq > before && event instanceof UsageEvent) meter?.usage(event.usage);
      if (attempt.foundSealed) break;
    }
  }

  /**
   * The budgets the run's calls draw on: its tenant's and its person's, in Redis. None for a
   * tenant without budgets: its calls make no reservation. Budgets that cannot be read (the
   * database is down and this worker never read them) are not applied, and that is logged: a
   * database outage does not stop every run.
   */
  private async budgetOf(job: RunJobData): Promise<ModelCallBudget | undefined> {
    const { budgets, agents, logger } = this.deps;
    if (!budgets) return undefined;
    try {
      const tenant = await budgets.directory.of(job.tenantId);
      const applicable = budgetsFor(tenant.budgets, job.userId);
      if (applicable.length === 0) return undefined;
      const prices = agents.get(job.assistantId)?.prices ?? PriceTable.EMPTY;
      return budgets.counters.forRun({ runId: job.runId, tenantId: job.tenantId, userId: job.userId, timeZone: tenant.timeZone, budgets: applicable, prices });
    } catch (err) {
      logger.error({ run_id: job.runId, tenant_id: job.tenantId, err }, "could not read the tenant's budgets; the run goes on without them");
      return undefined;
    }
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
  private async handOff(attempt: RunAttempt): Promise<RunOutcome> {
    const reason = attempt.handoff!;
    const job = { runId: attempt.ref.runId };
    if (reason.why === 'park' && reason.wait) {
      try {
        await this.deps.lifecycle.park(attempt.ref, attempt.ownerEpoch, reason.wait, attempt.seq);
        return { parked: reason.wait };
      } catch (err) {
        if (err instanceof RunFencedError) return this.handOffOutcome(job, new RunHandoff('fenced'));
        this.deps.logger.warn({ run_id: job.runId, err }, 'could not park the run; handing it back to the queue');
        return 'handed_back';
      }
    }
    return this.handOffOutcome(job, reason);
  }

  private handOffOutcome(job: Pick<RunJobData, 'runId'>, reason: RunHandoff): RunOutcome {
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

/** The run's model with its trace and its metrics around it (either may be off). */
function instrumented(model: ChatModel, trace?: RunTrace, meter?: RunMeter): ChatModel {
  const traced = trace ? trace.model(model) : model;
  return meter ? meter.model(traced) : traced;
}

/** The model, with each failed request logged whole: the run's events leave the LLM's address out, the operator needs it. */
function logged(model: ChatModel, runId: string, logger: RunRunnerDeps['logger']): ChatModel {
  return {
    id: model.id,
    async *stream(request) {
      try {
        yield* model.stream(request);
      } catch (err) {
        if (err instanceof LlmRequestError) logger.warn({ run_id: runId, status: err.status, err: err.message }, 'LLM request failed');
        throw err;
      }
    },
  };
}

function callerOf(job: RunJobData): Caller {
  return { tenantId: job.tenantId, userId: job.userId, role: 'user', ...(job.apiKeyId ? { keyId: job.apiKeyId } : {}) };
}
