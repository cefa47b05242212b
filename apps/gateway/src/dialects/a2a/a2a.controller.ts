import { Body, Controller, HttpCode, Inject, Post, Req, Res, UseFilters, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiDefaultResponse, ApiExtraModels, ApiOperation, ApiProduces, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Caller } from '#core/auth/caller.js';
import { CurrentCaller } from '../../auth/api-key.guard.js';
import { RunsService, type SubmittedRun } from '../../runs/runs.service.js';
import { ApiError } from '../../common/api-error.js';
import { pipeRunEvents, sseFrame } from '../../runs/run-event-stream.js';
import { ControlService, hitlTimedOut } from '../../runs/run-control.service.js';
import type { GatewaySettings } from '../../infra/gateway-config.js';
import { SETTINGS } from '../../infra/tokens.js';
import { SessionAccess } from '../../sessions/session-access.service.js';
import { clientSessionId } from '../../sessions/client-session-id.js';
import { holdMessagesToLimit } from '../../common/message-limit.js';
import { A2aRpcErrorBody, A2aRpcRequestBody, A2aRpcResultBody } from './a2a-rpc.dto.js';
import { A2aErrorFilter, A2aRpcError, RPC_CODE, rpcError, rpcErrorOf, rpcResult, type RpcId } from './a2a-rpc.js';
import { assistantOf, decisionOf, invalidParams, messageText, taskIdOf, unsupported, type IncomingMessage, type IncomingPart } from './a2a-requests.js';
import { A2aTaskProjection, type A2aStreamResponse, type A2aTask } from './a2a-task-projection.js';
import { V03_METHODS, v03StreamResponse, v03Task } from './a2a-v03.js';
import { HoldsStreamSlot } from '../../quotas/stream-slot.interceptor.js';

const CONTEXT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The JSON-RPC path, under the API prefix: the agent card names it. */
export const A2A_RPC_PATH = 'a2a';

/**
 * A2A 1.0 over JSON-RPC, as `@a2a-js/sdk`'s client speaks it: SendMessage (blocking until the
 * task ends or waits for input), SendStreamingMessage, GetTask, CancelTask and SubscribeToTask;
 * and the same calls under 0.3's names (`message/send` ... `tasks/resubscribe`), in 0.3's shapes.
 * A task is a run (its id the run id), a context a session; every answer is a projection of the
 * run's event log read from the start (no task store of its own), a stream continues from the
 * log's cursor, and a dropped stream is not a cancel.
 */
@ApiTags('A2A')
@Controller(A2A_RPC_PATH)
@UseFilters(A2aErrorFilter)
@ApiExtraModels(A2aRpcResultBody)
@ApiDefaultResponse({ description: 'A JSON-RPC error response; `error.data.error_code` is DataAgent\'s. A bad key is HTTP 401, a quota 429 with Retry-After', type: A2aRpcErrorBody })
export class A2aController {
  constructor(
    private readonly runs: RunsService,
    private readonly control: ControlService,
    private readonly access: SessionAccess,
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
  ) {}

  /** One JSON-RPC call; the streaming methods answer as Server-Sent Events, each `data:` a JSON-RPC response. */
  @UseInterceptors(HoldsStreamSlot)
  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'A2A JSON-RPC: SendMessage, SendStreamingMessage, GetTask, CancelTask, SubscribeToTask (1.0), or message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe (0.3); the agent card is at /.well-known/agent-card.json',
  })
  @ApiBody({ type: A2aRpcRequestBody })
  @ApiProduces('application/json', 'text/event-stream')
  @ApiResponse({
    status: 200,
    description: 'A JSON-RPC response; for SendStreamingMessage and SubscribeToTask an event stream of them (a Task first, then TaskStatusUpdateEvent and TaskArtifactUpdateEvent)',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(A2aRpcResultBody) } },
      'text/event-stream': { schema: { type: 'string', description: '`data: <JSON-RPC response>` lines whose result is a StreamResponse' } },
    },
  })
  async call(@CurrentCaller() caller: Caller, @Body() body: unknown, @Req() req: Request, @Res() res: Response): Promise<void> {
    const request = (body ?? {}) as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
    const id: RpcId = typeof request.id === 'string' || typeof request.id === 'number' ? request.id : null;
    try {
      if (Array.isArray(body) || request.jsonrpc !== '2.0' || typeof request.method !== 'string') {
        throw new A2aRpcError(RPC_CODE.invalidRequest, 'Not a JSON-RPC 2.0 request: send one object with jsonrpc "2.0", a method and params (batches are not supported)', { error_code: 'invalid_request' });
      }
      const params = (typeof request.params === 'object' && request.params !== null ? request.params : {}) as Record<string, unknown>;
      // 0.3's names reach the same calls, answered in 0.3's shapes.
      const legacy = V03_METHODS[request.method] !== undefined;
      const method = legacy ? V03_METHODS[request.method] : request.method;
      const shape = legacy ? V03_SHAPE : V10_SHAPE;
      switch (method) {
        case 'SendMessage':
          res.json(rpcResult(id, shape.sent(await this.send(caller, params, String(req.id ?? ''), legacy))));
          return;
        case 'SendStreamingMessage':
          await this.stream(await this.start(caller, params, String(req.id ?? '')), id, res, shape.streamed);
          return;
        case 'GetTask':
          res.json(rpcResult(id, shape.task((await this.snapshot(caller, taskIdOf(params))).task())));
          return;
        case 'CancelTask':
          res.json(rpcResult(id, shape.task(await this.cancel(caller, taskIdOf(params)))));
          return;
        case 'SubscribeToTask':
          await this.stream(await this.snapshot(caller, taskIdOf(params)), id, res, shape.streamed);
          return;
        default:
          throw unsupported(method);
      }
    } catch (err) {
      // A bad key, a quota, an outage or a fault keeps its HTTP status (and Retry-After): the filter answers it.
      if (!(err instanceof A2aRpcError) && !(err instanceof ApiError && !keepsHttpStatus(err))) throw err;
      const error = err instanceof A2aRpcError ? err : rpcErrorOf(err);
      if (res.headersSent) {
        if (!res.writableEnded) res.end(`data: ${JSON.stringify(rpcError(id, error))}\n\n`);
        return;
      }
      res.status(200).json(rpcError(id, error));
    }
  }

  /** SendMessage: starts a task (or answers the one waiting) and returns it once it ends or waits for input. */
  private async send(caller: Caller, params: Record<string, unknown>, requestId: string, legacy: boolean): Promise<A2aTask> {
    const projection = await this.start(caller, params, requestId);
    const configuration = params.configuration as { returnImmediately?: unknown; blocking?: unknown } | undefined;
    const returnImmediately = legacy ? configuration?.blocking === false : configuration?.returnImmediately === true;
    if (!returnImmediately) await this.settle(projection);
    return projection.task();
  }

  /**
   * Starts the task a message asks for: a new run in the message's context (or a new one), or,
   * for a message naming a task that waits for an approval, the decision it carries.
   * @returns the task's projection up to now.
   */
  private async start(caller: Caller, params: Record<string, unknown>, requestId: string): Promise<A2aTaskProjection> {
    const message = (params.message ?? null) as IncomingMessage | null;
    if (!message || typeof message !== 'object') throw invalidParams('message', 'is required');
    const parts = Array.isArray(message.parts) ? (message.parts as IncomingPart[]) : [];
    // One A2A message, all its parts (text, data, file) together.
    holdMessagesToLimit({ parts }, 'message.parts', this.settings.server.maxMessageBytes);
    if (typeof message.taskId === 'string' && message.taskId !== '') return this.answer(caller, message.taskId, message.contextId, parts);

    const text = messageText(parts);
    if (text.trim() === '') throw invalidParams('message.parts', 'has no text part');
    const assistantId = assistantOf(message.metadata) ?? assistantOf(params.metadata);
    let contextId: string | undefined;
    if (message.contextId !== undefined && message.contextId !== '') {
      if (typeof message.contextId !== 'string' || !CONTEXT_ID.test(message.contextId)) throw invalidParams('message.contextId', 'must be 1-64 letters, digits, _ or -');
      contextId = message.contextId;
    }
    const named = contextId ? await this.access.findNamed(caller, contextId) : undefined;
    const run = await this.runs.submit(
      caller,
      { message: text, ...(named?.session ? { session_id: named.sessionId } : {}), ...(assistantId ? { assistant_id: assistantId } : {}) },
      requestId,
      contextId && !named?.session ? { clientSessionId: contextId } : {},
    );
    return this.replay(run, contextId);
  }

  /** A message on a task that waits for an approval: its text ("approve", "reject") or data part (`{decision, request_id?, message?}`) decides it. */
  private async answer(caller: Caller, taskId: string, contextId: unknown, parts: IncomingPart[]): Promise<A2aTaskProjection> {
    const projection = await this.snapshot(caller, taskId);
    if (typeof contextId === 'string' && contextId !== '' && contextId !== projection.contextId) throw invalidParams('message.contextId', `is not the context of task ${taskId}`);
    const decision = decisionOf(parts);
    const request = projection.pendingApproval(decision.requestId);
    const expired = request ? undefined : projection.expiredApproval(decision.requestId);
    // Too late: the same answer every door gives a decision after its request's deadline.
    if (expired) throw rpcErrorOf(hitlTimedOut(expired));
    if (!request) {
      const why = projection.final
        ? `has ended (${projection.taskState}); continue the conversation with a new message in its context (contextId ${projection.contextId}, no taskId)`
        : decision.requestId
          ? `has no approval ${decision.requestId} waiting`
          : `is not waiting for input (${projection.taskState})`;
      throw new A2aRpcError(RPC_CODE.unsupportedOperation, `Task ${taskId} ${why}`, { error_code: 'task_not_waiting', details: { task_id: taskId, state: projection.taskState } });
    }
    await this.control.decide(caller, request.request_id, decision.decision, decision.message);
    projection.answered(request.request_id);
    return projection;
  }

  /** CancelTask: the run's cancel control message; answers the task once its `done` is in (or as it stands after the sync timeout). */
  private async cancel(caller: Caller, taskId: string): Promise<A2aTask> {
    const projection = await this.snapshot(caller, taskId);
    const run = { runId: projection.taskId, sessionId: projection.sessionId };
    const cancelled = !projection.final && (await this.control.cancelStarted({ runId: run.runId, sessionId: run.sessionId, tenantId: caller.tenantId }));
    if (!cancelled) {
      throw new A2aRpcError(RPC_CODE.taskNotCancelable, `Task ${taskId} has ended already (${projection.taskState})`, { error_code: 'task_not_cancelable', details: { task_id: taskId } });
    }
    await this.settle(projection, (p) => p.final);
    return projection.task();
  }

  /** The caller's task as its log has it now. @throws A2aRpcError TaskNotFound for an unknown or another user's task. */
  private async snapshot(caller: Caller, taskId: string): Promise<A2aTaskProjection> {
    const run = await this.access.getOwnedRun(caller, taskId);
    const { session } = await this.access.findNamed(caller, run.sessionId);
    return this.replay({ sessionId: run.sessionId, runId: run.runId }, session ? clientSessionId(session) : run.sessionId);
  }

  /** Folds the run's log, from its start to now, into a projection whose context is `contextId` (the client's name of the session). */
  private async replay(run: SubmittedRun, contextId = run.sessionId): Promise<A2aTaskProjection> {
    const projection = new A2aTaskProjection(run.runId, run.sessionId, contextId);
    const stop = await this.runs.follow(run, 0, (event) => projection.apply(event));
    stop();
    return projection;
  }

  /** Follows the run from where `projection` stands until `until` holds (settled: ended or waiting), or the sync timeout. */
  private async settle(projection: A2aTaskProjection, until: (p: A2aTaskProjection) => boolean = (p) => p.settled): Promise<void> {
    if (until(projection)) return;
    let done!: () => void;
    const settled = new Promise<void>((resolve) => (done = resolve));
    const run = { runId: projection.taskId, sessionId: projection.sessionId };
    const stop = await this.runs.follow(run, projection.lastSeq, (event) => {
      projection.apply(event);
      if (until(projection)) done();
    }, { onEnded: () => done() });
    // Past the sync timeout the task is answered as it stands: GetTask or SubscribeToTask follow it.
    const timer = setTimeout(done, this.settings.server.syncTimeoutMs);
    if (until(projection)) done();
    await settled;
    clearTimeout(timer);
    stop();
  }

  /** Streams the task: its snapshot, then the updates of each later event, until it ends or waits for input. */
  private async stream(projection: A2aTaskProjection, id: RpcId, res: Response, shaped: (response: A2aStreamResponse) => unknown): Promise<void> {
    const frames = (responses: A2aStreamResponse[]) => responses.map((response) => sseFrame(rpcResult(id, shaped(response))));
    await pipeRunEvents(res, {
      opening: frames([{ task: projection.task() }]),
      openingOnly: projection.settled,
      limit: this.settings.server.clientBufferMaxBytes,
      follow: (listener, pacing) => this.runs.follow({ runId: projection.taskId, sessionId: projection.sessionId }, projection.lastSeq, listener, pacing),
      step: (event) => ({ frames: frames(projection.apply(event)), ends: projection.settled }),
    });
  }
}

/** How results are written: 1.0's proto JSON (SendMessage answers `{task}`), or 0.3's `kind`-tagged objects (message/send answers the task). */
interface ResultShape {
  task: (task: A2aTask) => unknown;
  sent: (task: A2aTask) => unknown;
  streamed: (response: A2aStreamResponse) => unknown;
}

const V10_SHAPE: ResultShape = { task: (task) => task, sent: (task) => ({ task }), streamed: (response) => response };
const V03_SHAPE: ResultShape = { task: v03Task, sent: v03Task, streamed: v03StreamResponse };

/** Errors an HTTP client acts on by status (a bad key, a quota, a full system, an outage): answered by the filter with it. */
function keepsHttpStatus(error: ApiError): boolean {
  return error.status === 401 || error.status === 403 || error.status === 429 || error.status >= 500;
}
