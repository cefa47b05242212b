import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { EventDict } from '#core/events/execution-event.js';
import type { ChatMessage, ModelOptions, ToolSpec } from '#core/llm/chat-model.js';
import { toNewMessage } from '#core/session/message-records.js';
import { DEFAULT_ASSISTANT_ID, findAssistant } from '#core/config/assistant-catalog.js';
import type { Caller } from '#core/auth/caller.js';
import { Metrics, secondsSince } from '#telemetry/metrics.js';
import { endWithError, ROOT_CONTEXT, SpanKind, startSpan, traceparentOf, type Span } from '#telemetry/tracing.js';
import type { ConversationStore, NewSubmission } from '#core/session/session-store.js';
import { GroupCommit } from '#core/util/group-commit.js';
import { followEvents, type FollowListener, type FollowOptions } from '#transport/run-event-stream.js';
import { RunEventLog } from '#transport/run-event-log.js';
import { RunLifecycle } from '#core/run/run-lifecycle.js';
import { RunQueue } from '#transport/run-queue.js';
import { SessionAdmission } from '#transport/session-admission.js';
import { RunEventRelay } from '#transport/run-event-relay.js';
import { ApiError } from '../common/api-error.js';
import { Quotas } from '../quotas/quotas.service.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { SETTINGS, STORE } from '../infra/tokens.js';
import { ControlService } from './run-control.service.js';
import { SessionAccess } from '../sessions/session-access.service.js';
import { CLIENT_SESSION_ID_KEY, scopedSessionId } from '../sessions/client-session-id.js';
import { waitForDone } from './wait-for-done.js';
import { holdMessagesToLimit, messageTooLarge } from '../common/message-limit.js';
import type { RunJobData } from '#core/run/run-ports.js';


/** What a dialect submits: the person's message, and the session and assistant when it names them. */
export interface RunRequest {
  message: string;
  session_id?: string;
  assistant_id?: string;
  /** Limits the client sets on this run: lower than the deployment's, never higher. */
  limits?: { max_tokens?: number };
}

/** A run's whole answer once it is done: its session, its id, and its events in seq order, its `done` last. */
export interface RunAnswer {
  session_id: string;
  run_id: string;
  events: EventDict[];
}

/** How long a chat waits for another chat of its session to be admitted (enqueue and interrupt modes). */
const ADMISSION_WAIT_MS = 5_000;

export interface SubmittedRun {
  sessionId: string;
  runId: string;
}

/** How a chat arrives other than as one message of a DataAgent session (the OpenAI-compatible API). */
export interface SubmitOptions {
  /**
   * For a new session: the id the client chose for it instead of a generated one. It is stored
   * as the caller's own (scopedSessionId), with the chosen id in its metadata to show back.
   */
  clientSessionId?: string;
  /** For a new session: the conversation before this message, stored ahead of it (oldest first). */
  history?: ChatMessage[];
  /**
   * Instead of a user message (the request's `message` is then empty): the results of the
   * client's tools the session's last assistant turn called, stored as the run's input (RunJobData.toolResults).
   */
  toolResults?: ChatMessage[];
  /** The client's own tools, offered to the model (RunJobData.clientTools). */
  clientTools?: ToolSpec[];
  /** For a new session: it goes soon after its last activity (DATAAGENT_OPENAI_SESSION_TTL) unless a client continues it. */
  ephemeral?: boolean;
  /** Who decides calls that need approval (RunJobData.approvals); absent, the person. */
  approvals?: 'refuse' | 'approve';
  /** How the model samples (RunJobData.modelOptions); absent, the provider's defaults. */
  modelOptions?: ModelOptions;
}

/**
 * The gateway's side of a run: admit it, store the user's message, enqueue it, and
 * follow its events. It never calls a model or a tool.
 */
@Injectable()
export class RunsService {
  private pending = { count: 0, at: 0 };
  /**
   * Turns' rows are written in groups: the turns submitted while one group is written go in the
   * next, so a burst of a thousand chats costs a few transactions instead of three thousand
   * statements queued on the connection pool.
   */
  private readonly rows: GroupCommit<NewSubmission>;

  constructor(
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
    @Inject(STORE) private readonly store: ConversationStore,
    private readonly access: SessionAccess,
    private readonly log: RunEventLog,
    private readonly relay: RunEventRelay,
    private readonly queue: RunQueue,
    private readonly lifecycle: RunLifecycle,
    private readonly control: ControlService,
    private readonly admission: SessionAdmission,
    private readonly quotas: Quotas,
    private readonly metrics: Metrics,
  ) {
    this.rows = new GroupCommit((submissions) => this.store.submissions.writeMany(submissions));
  }

  /** Counts a socket message against the caller's key (REST requests are counted by the guard). @throws ApiError 429. */
  countRequest(caller: Caller): Promise<void> {
    return this.quotas.countRequest(caller);
  }

  /**
   * Admits and enqueues a chat turn.
   * @throws ApiError 404 (unknown session or assistant), 409 (a run is active), 413, 503.
   */
  async submit(caller: Caller, request: RunRequest, requestId?: string, options: SubmitOptions = {}): Promise<SubmittedRun> {
    // The trace of the run starts here; the worker continues it from the job's traceparent.
    const span = startSpan('chat.submit', ROOT_CONTEXT, { 'dataagent.tenant_id': caller.tenantId, 'dataagent.user_id': caller.userId }, SpanKind.PRODUCER);
    try {
      const submitted = await this.submitRun(caller, request, span, requestId, options);
      span.setAttributes({ 'dataagent.session_id': submitted.sessionId, 'dataagent.run_id': submitted.runId });
      span.end();
      return submitted;
    } catch (err) {
      endWithError(span, err instanceof Error ? err.message : String(err));
      throw err;
    }
  }

  private async submitRun(caller: Caller, request: RunRequest, span: Span, requestId: string | undefined, options: SubmitOptions): Promise<SubmittedRun> {
    const { server } = this.settings;
    const bytes = Buffer.byteLength(request.message, 'utf8') + (options.toolResults ?? []).reduce((sum, m) => sum + Buffer.byteLength(m.content, 'utf8'), 0);
    if (bytes > server.maxMessageBytes) throw messageTooLarge(bytes, server.maxMessageBytes);
    // The conversation a new session brings is stored as it is: each of its messages is held to the same limit.
    holdMessagesToLimit((options.history ?? []).map((m) => m.content), 'history', server.maxMessageBytes);
    const assistantId = request.assistant_id ?? DEFAULT_ASSISTANT_ID;
    if (!findAssistant(assistantId)) throw ApiError.notFound('assistant', assistantId);
    // A spent budget refuses the run before it takes a slot: every dialect submits here, and shows the 429 in its own shape.
    await this.quotas.admitBudgets(caller);
    const runId = randomUUID();
    await this.quotas.admitRun(caller, runId);
    try {
      return await this.createRun(caller, request, assistantId, runId, span, requestId, options);
    } catch (err) {
      // Never queued: its row (if written) ends failed and its slot of the tenant's concurrent runs is free again.
      await this.lifecycle.abandon({ runId, tenantId: caller.tenantId }, err instanceof EnqueueFailed).catch(() => undefined);
      throw err instanceof EnqueueFailed ? err.cause : err;
    }
  }

  private async createRun(caller: Caller, request: RunRequest, assistantId: string, runId: string, span: Span, requestId: string | undefined, options: SubmitOptions): Promise<SubmittedRun> {
    const { server } = this.settings;
    await this.admit();

    if (!request.session_id) {
      await this.quotas.admitSession(caller);
      const { clientSessionId } = options;
      const sessionId = clientSessionId === undefined ? randomUUID() : scopedSessionId(caller, clientSessionId);
      const title = (request.message || (options.history ?? []).findLast((m) => m.role === 'user')?.content || '').slice(0, 80);
      await this.rows.add({
        session: {
          sessionId,
          tenantId: caller.tenantId,
          userId: caller.userId,
          assistantId,
          title,
          ...(clientSessionId !== undefined ? { metadata: { [CLIENT_SESSION_ID_KEY]: clientSessionId } } : {}),
          ...(options.ephemeral ? { ephemeral: true } : {}),
        },
        ...this.runRows(caller, sessionId, runId, assistantId, request.message, options.history, options.toolResults),
      });
      return this.enqueue(caller, { sessionId, runId }, assistantId, request.message, span, requestId, { approvals: options.approvals, firstTurn: !options.history?.length, ...this.runInput(options), ...runLimits(request) });
    }

    const sessionId = request.session_id;
    const session = await this.access.getOwned(caller, sessionId);
    if (session.assistantId !== assistantId && request.assistant_id) {
      throw new ApiError(409, 'assistant_mismatch', `session ${sessionId} belongs to assistant ${session.assistantId}`);
    }
    // A client that continues a session that was to go soon (a stateless call's) keeps it.
    if (session.ephemeral) await this.store.sessions.update(sessionId, { ephemeral: false });
    const mode = server.multitask;
    // Looking for active runs and creating this one happen under the session's admission lock.
    const admitted = await this.admission.exclusive(sessionId, mode === 'reject' ? 0 : ADMISSION_WAIT_MS, async () => {
      const active = await this.store.runs.listActive(sessionId);
      if (active.length > 0 && mode === 'reject') {
        throw new ApiError(409, 'run_in_progress', 'This session already has an active run; wait for it, cancel it, or set DATAAGENT_MULTITASK', { run_id: active[0].runId });
      }
      if (active.length > 0 && mode === 'interrupt') await this.control.cancelSession(caller, sessionId);
      await this.rows.add({ touchSessionId: sessionId, ...this.runRows(caller, sessionId, runId, assistantId, request.message, [], options.toolResults) });
      return { runId, afterRuns: active.length > 0 ? active.map((r) => r.runId) : undefined };
    });
    if (admitted === 'busy') {
      if (mode === 'reject') throw new ApiError(409, 'run_in_progress', 'Another message of this session is being started; wait for its run, or set DATAAGENT_MULTITASK', {});
      throw new ApiError(503, 'session_busy', 'Too many messages for this session at once; retry shortly', {}, { 'Retry-After': '1' });
    }
    return this.enqueue(caller, { sessionId, runId: admitted.runId }, assistantId, request.message, span, requestId, { afterRuns: admitted.afterRuns, approvals: options.approvals, ...this.runInput(options), ...runLimits(request) });
  }

  /** What the run gets besides the message: the client's sampling, tools and tool results. */
  private runInput(options: SubmitOptions): Pick<RunJobData, 'modelOptions' | 'clientTools' | 'toolResults'> {
    return {
      ...(options.modelOptions ? { modelOptions: options.modelOptions } : {}),
      ...(options.clientTools?.length ? { clientTools: options.clientTools } : {}),
      ...(options.toolResults?.length ? { toolResults: options.toolResults } : {}),
    };
  }

  /** The run's row and its input (the user's message, or the client's tool results), after the earlier conversation a new session brings. */
  private runRows(caller: Caller, sessionId: string, runId: string, assistantId: string, message: string, history: ChatMessage[] = [], toolResults: ChatMessage[] = []): Pick<NewSubmission, 'run' | 'messages'> {
    return {
      run: { runId, sessionId, tenantId: caller.tenantId, userId: caller.userId, assistantId },
      messages: [
        ...history.map((m) => toNewMessage(m, sessionId, null)),
        ...(toolResults.length > 0 ? toolResults.map((m) => toNewMessage(m, sessionId, runId)) : [{ sessionId, runId, role: 'user' as const, content: message, metadata: {} }]),
      ],
    };
  }

  /**
   * Announces and queues a run whose rows are written.
   * @throws EnqueueFailed when it cannot be queued: the caller has the lifecycle end it failed at once, or its session would answer 409 forever.
   */
  private async enqueue(caller: Caller, run: SubmittedRun, assistantId: string, message: string, span: Span, requestId: string | undefined, how: Pick<RunJobData, 'afterRuns' | 'approvals' | 'firstTurn' | 'modelOptions' | 'clientTools' | 'toolResults' | 'maxRunTokens'>): Promise<SubmittedRun> {
    const { sessionId, runId } = run;
    const { afterRuns, approvals, firstTurn, modelOptions, clientTools, toolResults, maxRunTokens } = how;
    try {
      await this.lifecycle.enqueue({
        runId,
        sessionId,
        tenantId: caller.tenantId,
        userId: caller.userId,
        assistantId,
        apiKeyId: caller.keyId,
        message,
        requestId,
        enqueuedAt: Date.now(),
        afterRuns,
        traceparent: traceparentOf(span),
        ...(approvals ? { approvals } : {}),
        ...(firstTurn ? { firstTurn } : {}),
        ...(modelOptions ? { modelOptions } : {}),
        ...(clientTools ? { clientTools } : {}),
        ...(toolResults ? { toolResults } : {}),
        ...(maxRunTokens ? { maxRunTokens } : {}),
      });
    } catch (err) {
      throw new EnqueueFailed(err);
    }
    this.metrics.runsQueued.inc();
    return { sessionId, runId };
  }

  /**
   * Finds a run the caller may follow: the given one, or the session's active run.
   * @throws ApiError 404 for unknown or foreign sessions and runs, 409 when there is no run to pick.
   */
  async resolveRun(caller: Caller, sessionId: string | undefined, runId: string | undefined): Promise<SubmittedRun> {
    if (runId) {
      const run = await this.access.getOwnedRun(caller, runId, sessionId);
      return { sessionId: run.sessionId, runId };
    }
    if (!sessionId) throw new ApiError(422, 'validation_failed', 'session_id or run_id is required', {});
    await this.access.getOwned(caller, sessionId);
    const active = await this.store.runs.listActive(sessionId);
    if (active.length === 0) throw new ApiError(409, 'no_active_run', 'The session has no active run; pass run_id to replay a finished one', { session_id: sessionId });
    return { sessionId, runId: active[0].runId };
  }

  /**
   * Streams a run's events after `afterSeq` (0: from its start), then live ones. `ready` paces
   * the replay; `onEnded` hears that the run had ended at or before `afterSeq` (FollowOptions).
   */
  follow(run: SubmittedRun, afterSeq: number, onEvent: FollowListener, pacing: Pick<FollowOptions, 'ready' | 'onEnded'> = {}): Promise<() => void> {
    return followEvents(
      this.relay,
      this.log,
      { runId: run.runId, afterSeq, archive: (id, after) => this.store.events.list(id, after), ...pacing },
      (event, live, raw) => {
        onEvent(event, live, raw);
        // Replayed events are old by design: only live ones say how fast events reach clients.
        const at = live ? Date.parse(event.timestamp) : NaN;
        if (Number.isFinite(at)) this.metrics.eventDelivery.observe(secondsSince(at));
      },
    );
  }

  /**
   * Submits a turn and waits for its `done`.
   * @throws ApiError 504 when the run does not finish within the sync timeout.
   */
  async chatAndWait(caller: Caller, request: RunRequest, requestId?: string): Promise<RunAnswer> {
    const run = await this.submit(caller, request, requestId);
    const events: EventDict[] = [];
    const wait = await waitForDone((listener) => this.follow(run, 0, listener), (event) => events.push(event), { timeoutMs: this.settings.server.syncTimeoutMs });
    if (wait.outcome !== 'done') throw new ApiError(504, 'run_timeout', 'The run did not finish in time; follow it by its run_id', { run_id: run.runId, session_id: run.sessionId });
    return { session_id: run.sessionId, run_id: run.runId, events };
  }

  /** Rejects new runs with 503 while the queue holds more than the configured maximum. */
  private async admit(): Promise<void> {
    const now = Date.now();
    if (now - this.pending.at > 250) this.pending = { count: await this.queue.pendingCount(), at: now };
    if (this.pending.count >= this.settings.server.maxPendingRuns) {
      throw new ApiError(503, 'over_capacity', 'DataAgent is at capacity; retry shortly', { pending_runs: this.pending.count }, { 'Retry-After': '5' });
    }
    this.pending.count++;
  }
}

/** A run whose rows are written could not be queued: the lifecycle ends it failed. */
class EnqueueFailed extends Error {
  constructor(override readonly cause: unknown) {
    super('The run could not be queued');
  }
}

/** The run's own limits the client asked for (the worker keeps the lower of these and the deployment's). */
function runLimits(request: RunRequest): Pick<RunJobData, 'maxRunTokens'> {
  const maxTokens = request.limits?.max_tokens;
  return maxTokens ? { maxRunTokens: maxTokens } : {};
}
