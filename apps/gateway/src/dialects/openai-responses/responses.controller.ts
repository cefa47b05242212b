import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res, UseFilters, UseInterceptors } from '@nestjs/common';
import { ApiDefaultResponse, ApiExtraModels, ApiOkResponse, ApiOperation, ApiQuery, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { findAssistant } from '#core/config/assistant-catalog.js';
import type { Caller } from '#core/auth/caller.js';
import type { EventDict } from '#core/events/execution-event.js';
import type { ChatMessage, ModelOptions } from '#core/llm/chat-model.js';
import type { RunRecord } from '#core/session/session-store.js';
import { CurrentCaller } from '../../auth/api-key.guard.js';
import { RunsService, type SubmitOptions, type SubmittedRun } from '../../runs/runs.service.js';
import { ApiError } from '../../common/api-error.js';
import { pipeRunEvents, sseFrame } from '../../runs/run-event-stream.js';
import { ControlService } from '../../runs/run-control.service.js';
import type { GatewaySettings } from '../../infra/gateway-config.js';
import { SETTINGS } from '../../infra/tokens.js';
import { OpenAiErrorBody } from '../openai-error-body.dto.js';
import { OpenAiErrorFilter } from '../openai-errors.js';
import { SessionAccess } from '../../sessions/session-access.service.js';
import { holdMessagesToLimit } from '../../common/message-limit.js';
import { parseInput, parseResponseTools, type ResponseInput } from './response-input.js';
import { ResponseProjection, responseIdOf, windowOf, type ResponseObject, type ResponseWindow } from './response-projection.js';
import { CreateResponseDto, ResponseObjectDto } from './responses.dto.js';
import { HoldsStreamSlot } from '../../quotas/stream-slot.interceptor.js';

/** How long a cancel waits for the run's `done` before it answers with the response as it stands. */
const CANCEL_WAIT_MS = 10_000;

/** A response's run, as this door follows it. */
interface ResponseRun extends SubmittedRun {
  window: ResponseWindow;
  model: string;
}

const RESPONSE_STREAM = {
  'text/event-stream': {
    schema: { type: 'string', description: 'With `stream: true`: `event: <type>` / `data: <event JSON>` pairs (response.created … response.completed | response.incomplete | response.failed), each with a sequence_number' },
  },
};

/**
 * OpenAI's Responses API over DataAgent's runs, for the `openai` SDK's `responses`, the AI SDK's
 * default OpenAI provider and LangChain's `useResponsesApi`. A response is a projection of one
 * run's event log (a run with approvals is one response per approval): retrieve and resume
 * replay the log, cancel is the run's cancel, `previous_response_id` continues the run's
 * session, an approval answer continues the same run. A dropped stream is not a stop.
 */
@Controller('v1/responses')
@UseFilters(OpenAiErrorFilter)
@ApiTags('OpenAI-compatible')
@ApiDefaultResponse({ description: "An error, in OpenAI's shape; `code` is DataAgent's error_code", type: OpenAiErrorBody })
@ApiExtraModels(ResponseObjectDto)
export class ResponsesController {
  constructor(
    private readonly runs: RunsService,
    private readonly control: ControlService,
    private readonly access: SessionAccess,
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
  ) {}

  /**
   * Creates a response: a run of the assistant named by `model`, or with `previous_response_id`
   * the next step of that response's conversation (a new message, the outputs of its function
   * calls, or the answer to its approval request, which continues the same run).
   */
  @UseInterceptors(HoldsStreamSlot)
  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Create a response (OpenAI Responses API): one run of an assistant, streamed with stream: true, or at once with background: true' })
  @ApiOkResponse({ description: 'The response, or with `stream: true` its events', content: { 'application/json': { schema: { $ref: getSchemaPath(ResponseObjectDto) } }, ...RESPONSE_STREAM } })
  async create(@CurrentCaller() caller: Caller, @Body() body: CreateResponseDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    if (!findAssistant(body.model)) throw new ApiError(404, 'model_not_found', `The model "${body.model}" does not exist: GET /v1/models lists the assistants`, { fields: { model: ['unknown'] } });
    holdMessagesToLimit(body.input, 'input', this.settings.server.maxMessageBytes);
    holdMessagesToLimit(body.instructions, 'instructions', this.settings.server.maxMessageBytes);
    const previous = body.previous_response_id === undefined ? undefined : await this.ownedResponse(caller, body.previous_response_id, 'previous_response_id');
    const input = parseInput(body.input, previous !== undefined);
    if (previous && body.instructions !== undefined) {
      throw unsupported('instructions go with the first response of a conversation: the conversation of previous_response_id keeps its own', 'instructions');
    }
    const run = input.kind === 'approvals' ? await this.answerApprovals(caller, previous!, input.approvals) : await this.submit(caller, body, input, previous, String(req.id ?? ''));
    res.setHeader('X-DataAgent-Session', run.sessionId);
    res.setHeader('X-DataAgent-Run', run.runId);
    if (body.stream) await this.stream(run, -1, res);
    else if (body.background) res.json({ ...(await this.snapshot(run)), background: true });
    else await this.whole(run, res);
  }

  /** The response as its run's log has it now; with `stream=true`, its events after `starting_after`, then live ones until it ends. */
  @UseInterceptors(HoldsStreamSlot)
  @Get(':id')
  @ApiOperation({ summary: 'A response as it is now, built from its run; stream=true replays its events after starting_after, then follows it' })
  @ApiQuery({ name: 'stream', required: false, type: Boolean, description: 'Stream the events instead' })
  @ApiQuery({ name: 'starting_after', required: false, type: Number, description: 'With stream=true: the last sequence_number received (resume)' })
  @ApiOkResponse({ description: 'The response, or with `stream=true` its events', content: { 'application/json': { schema: { $ref: getSchemaPath(ResponseObjectDto) } }, ...RESPONSE_STREAM } })
  async retrieve(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query('stream') stream: string | undefined, @Query('starting_after') startingAfter: string | undefined, @Res() res: Response): Promise<void> {
    const run = await this.ownedResponse(caller, id, 'id');
    if (stream === 'true') await this.stream(run, sequenceNumber(startingAfter), res);
    else res.json(await this.snapshot(run));
  }

  /** Cancels the response's run (its log ends with one `done`, cancelled) and answers with the response once it ends. */
  @Post(':id/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: "Cancel a response: its run is cancelled (one done, cancelled); a response that had ended stays as it was" })
  @ApiOkResponse({ type: ResponseObjectDto })
  async cancel(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<ResponseObject> {
    const run = await this.ownedResponse(caller, id, 'id');
    await this.control.cancelStarted({ runId: run.runId, sessionId: run.sessionId, tenantId: caller.tenantId });
    return (await this.follow(run, CANCEL_WAIT_MS)).snapshot();
  }

  /** The run of a response id the caller owns. @throws ApiError 404 `response_not_found`. */
  private async ownedResponse(caller: Caller, id: string, field: string): Promise<ResponseRun & { record: RunRecord }> {
    const window = windowOf(id);
    const notFound = new ApiError(404, 'response_not_found', `No response ${id}`, { fields: { [field]: ['unknown'] } });
    if (!window) throw notFound;
    let record: RunRecord;
    try {
      record = await this.access.getOwnedRun(caller, window.runId);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw notFound;
      throw err;
    }
    const run = { sessionId: record.sessionId, runId: record.runId, window, model: record.assistantId, record };
    // A run's later responses each open at one of its approval requests; any other seq names none.
    if (window.afterSeq > 0 && !(await this.eventsSoFar(run)).some((e) => e.seq === window.afterSeq && e.event_type === 'hitl_request')) throw notFound;
    return run;
  }

  /** Starts the run that answers `input`: in a new session, or in the session of the previous response. */
  private async submit(caller: Caller, body: CreateResponseDto, input: Exclude<ResponseInput, { kind: 'approvals' }>, previous: ResponseRun | undefined, requestId: string): Promise<ResponseRun> {
    const clientTools = parseResponseTools(body.tools, body.tool_choice);
    const modelOptions = modelOptionsOf(body);
    const options: SubmitOptions = { ...(clientTools.length > 0 ? { clientTools } : {}), ...(modelOptions ? { modelOptions } : {}) };
    let message = '';
    if (input.kind === 'tool_outputs') {
      options.toolResults = await this.toolResults(previous!, input.outputs);
    } else {
      message = input.message;
      if (input.toolResults) options.toolResults = input.toolResults;
    }
    if (!previous) {
      const instructions: ChatMessage[] = body.instructions ? [{ role: 'system', content: body.instructions }] : [];
      const history = [...instructions, ...(input.kind === 'message' ? input.history : [])];
      Object.assign(options, { history, ...(body.store === false ? { ephemeral: true } : {}) });
    }
    const run = await this.runs.submit(caller, { message, assistant_id: body.model, ...(previous ? { session_id: previous.sessionId } : {}) }, requestId, options);
    return { ...run, window: { runId: run.runId, afterSeq: 0 }, model: body.model };
  }

  /**
   * The outputs of the previous response's function calls, as the run's tool results.
   * @throws ApiError 400 for a call_id the previous response did not make.
   */
  private async toolResults(previous: ResponseRun, outputs: Array<{ callId: string; output: string }>): Promise<ChatMessage[]> {
    const calls = new Map<string, string>();
    for (const event of await this.eventsSoFar(previous)) {
      if (event.event_type === 'tool_call' && event.client) calls.set(event.tool_call_id, event.tool_name);
    }
    return outputs.map(({ callId, output }, i) => {
      const name = calls.get(callId);
      if (!name) throw invalid(`input[${i}].call_id ${callId} is no function_call of ${responseIdOf(previous.window)}`, `input[${i}].call_id`);
      return { role: 'tool', toolCallId: callId, name, content: output };
    });
  }

  /**
   * Records the answers to the previous response's approval requests (ControlService.decide); the
   * new response is the same run from the last request answered on.
   * @throws ApiError 400 for a request the previous response's run did not ask, 404/409 as decide.
   */
  private async answerApprovals(caller: Caller, previous: ResponseRun, approvals: Array<{ requestId: string; approve: boolean; reason: string }>): Promise<ResponseRun> {
    const asked = new Map<string, number>();
    for (const event of await this.eventsSoFar(previous)) {
      if (event.event_type === 'hitl_request') asked.set(event.request_id, event.seq);
    }
    const seqs = approvals.map(({ requestId }, i) => {
      const seq = asked.get(requestId);
      if (seq === undefined) throw invalid(`input[${i}].approval_request_id ${requestId} is no approval request of ${responseIdOf(previous.window)}`, `input[${i}].approval_request_id`);
      return seq;
    });
    for (const { requestId, approve, reason } of approvals) await this.control.decide(caller, requestId, approve ? 'approve' : 'reject', reason);
    return { ...previous, window: { runId: previous.runId, afterSeq: Math.max(...seqs) } };
  }

  /** The run's events logged so far. */
  private async eventsSoFar(run: SubmittedRun): Promise<EventDict[]> {
    const events: EventDict[] = [];
    // follow() hands over the whole replay before it resolves.
    const stop = await this.runs.follow(run, 0, (event) => events.push(event));
    stop();
    return events;
  }

  /** The response as the log has it now. */
  private async snapshot(run: ResponseRun): Promise<ResponseObject> {
    const projection = new ResponseProjection(run.window, run.model);
    for (const event of await this.eventsSoFar(run)) projection.eventsOf(event);
    return projection.snapshot();
  }

  /** Follows the run until the response ends, `timeoutMs` pass or `signal` aborts; the projection as it then stands. */
  private async follow(run: ResponseRun, timeoutMs: number, signal?: AbortSignal): Promise<ResponseProjection> {
    const projection = new ResponseProjection(run.window, run.model);
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    signal?.addEventListener('abort', () => settle(), { once: true });
    const stop = await this.runs.follow(
      run,
      0,
      (event) => {
        projection.eventsOf(event);
        if (projection.isEnded) settle();
      },
      { onEnded: () => settle() },
    );
    const timer = setTimeout(settle, timeoutMs);
    try {
      if (!projection.isEnded && !signal?.aborted) await settled;
    } finally {
      clearTimeout(timer);
      stop();
    }
    return projection;
  }

  /** The whole response once it ends; past DATAAGENT_SYNC_TIMEOUT_MS, as it stands (in_progress: retrieve it later). */
  private async whole(run: ResponseRun, res: Response): Promise<void> {
    const gone = new AbortController();
    const leave = () => gone.abort();
    res.on('close', leave);
    try {
      const projection = await this.follow(run, this.settings.server.syncTimeoutMs, gone.signal);
      if (!gone.signal.aborted) res.json(projection.snapshot());
    } finally {
      res.off('close', leave);
    }
  }

  /** The response's events after `startingAfter` as server-sent events, then live ones until it ends. A client that leaves stops its stream, not the run. */
  private async stream(run: ResponseRun, startingAfter: number, res: Response): Promise<void> {
    const projection = new ResponseProjection(run.window, run.model);
    await pipeRunEvents(res, {
      limit: this.settings.server.clientBufferMaxBytes,
      follow: (listener, pacing) => this.runs.follow(run, 0, listener, pacing),
      step: (event) => ({
        frames: projection.eventsOf(event).flatMap((out) => (out.sequence_number > startingAfter ? [sseFrame(out, out.type)] : [])),
        ends: projection.isEnded,
      }),
    });
  }
}

/** `starting_after`: a sequence_number, or none (-1: from the first event). */
function sequenceNumber(raw: string | undefined): number {
  if (raw === undefined || raw === '') return -1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw invalid('starting_after must be a sequence_number (an integer from 0)', 'starting_after');
  return n;
}

function modelOptionsOf(body: CreateResponseDto): ModelOptions | undefined {
  const options: ModelOptions = {};
  if (body.temperature !== undefined) options.temperature = body.temperature;
  if (body.max_output_tokens !== undefined) options.maxTokens = body.max_output_tokens;
  return Object.keys(options).length > 0 ? options : undefined;
}

function invalid(message: string, field: string): ApiError {
  return new ApiError(400, 'invalid_request', message, { fields: { [field]: [message] } });
}

function unsupported(message: string, field: string): ApiError {
  return new ApiError(400, 'unsupported_parameter', message, { fields: { [field]: ['unsupported'] } }, { 'x-should-retry': 'false' });
}
