import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Req, Res, UseFilters, UseInterceptors } from '@nestjs/common';
import { ApiDefaultResponse, ApiExtraModels, ApiHeader, ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { RedisClient } from '#transport/redis-connection.js';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsInt, IsNumber, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { BUILTIN_ASSISTANTS, findAssistant } from '#core/config/assistant-catalog.js';
import type { DoneEventDict, ErrorEventDict, EventDict, RunUsage } from '#core/events/execution-event.js';
import type { ModelOptions } from '#core/llm/chat-model.js';
import type { Caller } from '#core/auth/caller.js';
import { CurrentCaller } from '../../auth/api-key.guard.js';
import { RunsService, type SubmitOptions, type SubmittedRun } from '../../runs/runs.service.js';
import { waitForDone } from '../../runs/wait-for-done.js';
import { ApiError } from '../../common/api-error.js';
import { pipeRunEvents } from '../../runs/run-event-stream.js';
import { ControlService } from '../../runs/run-control.service.js';
import type { GatewaySettings } from '../../infra/gateway-config.js';
import { REDIS, SETTINGS } from '../../infra/tokens.js';
import { IdempotentRequests } from './idempotent-requests.js';
import { SessionAccess } from '../../sessions/session-access.service.js';
import { holdMessagesToLimit } from '../../common/message-limit.js';
import { parseClientTools, parseMessages, toolSummary, wireArguments } from '../openai-wire.js';
import { ChatCompletion, ChatCompletionChunk, OpenAiModel, OpenAiModelList, type ClientToolCall, type CompletionUsage } from './openai-answers.dto.js';
import { OpenAiErrorBody } from '../openai-error-body.dto.js';
import { OpenAiErrorFilter, openAiErrorBody } from '../openai-errors.js';
import { HoldsStreamSlot } from '../../quotas/stream-slot.interceptor.js';

const SESSION_ID = /^[A-Za-z0-9_-]{1,64}$/;

export class ChatCompletionRequestDto {
  @ApiProperty({ description: 'An assistant id (GET /v1/models)', example: 'default' })
  @IsString() @MaxLength(64)
  model: string;

  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true }, example: [{ role: 'user', content: 'Hello' }], description: 'The conversation, oldest first' })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(10_000)
  messages: unknown[];

  @ApiPropertyOptional({ description: 'Answer as chat.completion.chunk server-sent events' })
  @IsOptional() @IsBoolean()
  stream?: boolean;

  @ApiPropertyOptional({ maxLength: 256 })
  @IsOptional() @IsString() @MaxLength(256)
  user?: string;

  @ApiPropertyOptional({ description: 'Choices to generate: 1 (an agent run answers once)', minimum: 1, maximum: 1 })
  @IsOptional() @IsInt() @Min(1)
  n?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 2, description: "Passed to the assistant's model for every call of the run" })
  @IsOptional() @IsNumber() @Min(0) @Max(2)
  temperature?: number;

  @ApiPropertyOptional({ minimum: 1, description: 'Most tokens of each model answer of the run' })
  @IsOptional() @IsInt() @Min(1)
  max_tokens?: number;

  @ApiPropertyOptional({ minimum: 1, description: 'As max_tokens (the newer name); the smaller wins when both are sent' })
  @IsOptional() @IsInt() @Min(1)
  max_completion_tokens?: number;

  @ApiPropertyOptional({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 4 }], description: 'Up to 4 sequences that end a model answer' })
  @IsOptional()
  stop?: unknown;

  @ApiPropertyOptional({ description: 'Sampling seed (OpenAI-compatible models)' })
  @IsOptional() @IsInt()
  seed?: number;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: "`{type: 'text' | 'json_object'}` or `{type: 'json_schema', json_schema}` (OpenAI-compatible models)" })
  @IsOptional() @IsObject()
  response_format?: { type?: unknown; [field: string]: unknown };

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: "Function tools the client runs itself, offered to the model beside the assistant's own. A call to one ends the answer with `tool_calls` (finish_reason `tool_calls`); send the results as role `tool` messages in the next request. A name one of the assistant's tools has is refused (400, `client_tool_conflict`)",
  })
  @IsOptional() @IsArray() @ArrayMaxSize(128)
  tools?: unknown[];

  @ApiPropertyOptional({ enum: ['auto'], description: '`auto` (the default) only: the model decides between the assistant\'s tools and the client\'s' })
  @IsOptional()
  tool_choice?: unknown;

  @ApiPropertyOptional({ type: 'object', properties: { include_usage: { type: 'boolean' } }, description: 'include_usage: a last chunk (with no choices) carries the run\'s usage' })
  @IsOptional() @IsObject()
  stream_options?: { include_usage?: unknown };

  @ApiPropertyOptional({ type: 'object', properties: { session_id: { type: 'string' } }, description: 'session_id: the DataAgent session to keep the conversation in' })
  @IsOptional() @IsObject() @Type(() => Object)
  metadata?: { session_id?: unknown };
}

/**
 * An OpenAI-compatible front door, so existing chat clients (the openai SDK, Open WebUI,
 * LibreChat) can talk to DataAgent: `model` names an assistant, each request is a run through
 * the same queue and workers, with the assistant's tools and the user's MCP servers. Those run
 * inside DataAgent and are summarised in the answer; calls that need approval follow
 * DATAAGENT_OPENAI_APPROVALS. The client's own `tools` are offered beside them: a call to one
 * ends the run and comes back as `tool_calls`, and the next request continues from the results.
 * A client that goes away cancels its run.
 */
@Controller('v1')
@UseFilters(OpenAiErrorFilter)
@ApiTags('OpenAI-compatible')
@ApiDefaultResponse({ description: "An error, in OpenAI's shape; `code` is DataAgent's error_code", type: OpenAiErrorBody })
export class OpenAiCompatController {
  constructor(
    private readonly runs: RunsService,
    private readonly control: ControlService,
    private readonly access: SessionAccess,
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
    @Inject(REDIS) redis: RedisClient,
  ) {
    // A day: longer than any client retries one request.
    this.idempotent = new IdempotentRequests(redis, 24 * 3600);
  }

  private readonly idempotent: IdempotentRequests;

  /** The assistants, as models. */
  @Get('models')
  @ApiOperation({ summary: 'The assistants, as models' })
  @ApiOkResponse({ type: OpenAiModelList })
  models(): OpenAiModelList {
    return { object: 'list', data: BUILTIN_ASSISTANTS.map((a) => asModel(a.id)) };
  }

  /** One assistant, as a model. @throws ApiError 404 `model_not_found`. */
  @Get('models/:id')
  @ApiOperation({ summary: 'One assistant, as a model' })
  @ApiOkResponse({ type: OpenAiModel })
  model(@Param('id') id: string): OpenAiModel {
    if (!findAssistant(id)) throw new ApiError(404, 'model_not_found', `The model "${id}" does not exist: GET /v1/models lists the assistants`, { fields: { model: ['unknown'] } });
    return asModel(id);
  }

  /**
   * `messages` is the conversation, as OpenAI clients send it. With `X-DataAgent-Session` (or
   * `metadata.session_id`) it is kept as that DataAgent session: a new one stores the earlier
   * messages, an existing one already holds them and takes only the newest.
   */
  @UseInterceptors(HoldsStreamSlot)
  @Post('chat/completions')
  @HttpCode(200)
  @ApiOperation({ summary: 'A chat completion from an assistant: one run through the queue and workers (stream: true for chunks)' })
  @ApiHeader({ name: 'X-DataAgent-Session', required: false, description: 'Keep the conversation as this DataAgent session' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'A retry with the same key (and body) follows the run the first request started instead of starting another; a client that leaves does not cancel it' })
  @ApiExtraModels(ChatCompletion, ChatCompletionChunk)
  @ApiOkResponse({
    description: 'The whole answer, or with `stream: true` its chunks',
    headers: {
      'X-DataAgent-Session': { description: 'The DataAgent session the conversation is kept in', schema: { type: 'string' } },
      'X-DataAgent-Run': { description: 'The run that answers', schema: { type: 'string' } },
    },
    content: {
      'application/json': { schema: { $ref: getSchemaPath(ChatCompletion) } },
      'text/event-stream': {
        schema: { type: 'string', description: 'With `stream: true`: `data: <ChatCompletionChunk as JSON>` events, then `data: [DONE]`' },
      },
    },
  })
  async completions(
    @CurrentCaller() caller: Caller,
    @Body() body: ChatCompletionRequestDto,
    @Headers('x-dataagent-session') sessionHeader: string | undefined,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    if (!findAssistant(body.model)) throw new ApiError(404, 'model_not_found', `The model "${body.model}" does not exist: GET /v1/models lists the assistants`, { fields: { model: ['unknown'] } });
    holdMessagesToLimit(body.messages, 'messages', this.settings.server.maxMessageBytes);
    if (body.n !== undefined && body.n > 1) throw new ApiError(400, 'unsupported_parameter', 'n greater than 1 is not supported: a run answers once', { fields: { n: ['unsupported'] } }, NO_RETRY);
    // With a key the client means to retry: leaving does not cancel the run, its retry follows it.
    const cancelOnLeave = idempotencyKey === undefined;
    // The session as the client named it (its own name space: SessionAccess.findNamed); shown back as it sent it.
    const clientSessionId = sessionHeader ?? (typeof body.metadata?.session_id === 'string' ? body.metadata.session_id : undefined);
    if (clientSessionId !== undefined && !SESSION_ID.test(clientSessionId)) {
      throw new ApiError(400, 'invalid_request', 'X-DataAgent-Session must be 1-64 letters, digits, _ or -', { fields: { session_id: ['invalid'] } });
    }
    const claim = idempotencyKey === undefined ? undefined : await this.idempotent.claim(caller, idempotencyKey, body);
    if (claim?.kind === 'replay') {
      const run = { runId: claim.runId, sessionId: claim.sessionId, tenantId: caller.tenantId };
      res.setHeader('X-DataAgent-Session', clientSessionId ?? run.sessionId);
      res.setHeader('X-DataAgent-Run', run.runId);
      if (body.stream) await this.stream(run, body.model, res, cancelOnLeave, includeUsage(body));
      else await this.whole(run, body.model, res, cancelOnLeave);
      return;
    }
    const { history, message, toolResults } = parseMessages(body.messages);
    const clientTools = parseClientTools(body.tools, body.tool_choice);
    const modelOptions = modelOptionsOf(body);
    const options: SubmitOptions = {
      approvals: this.settings.server.openAiApprovals === 'approve' ? 'approve' : 'refuse',
      ...(modelOptions ? { modelOptions } : {}),
      ...(clientTools.length > 0 ? { clientTools } : {}),
      ...(toolResults ? { toolResults } : {}),
    };
    let existing: string | undefined;
    if (clientSessionId !== undefined) {
      const named = await this.access.findNamed(caller, clientSessionId);
      if (named.session) existing = named.sessionId;
      else Object.assign(options, { clientSessionId, history });
    } else {
      // Stateless: the client sends the whole conversation each time, so its session goes soon (DATAAGENT_OPENAI_SESSION_TTL).
      Object.assign(options, { history, ephemeral: true });
    }
    let submitted: SubmittedRun;
    try {
      submitted = await this.runs.submit(caller, { message, assistant_id: body.model, ...(existing ? { session_id: existing } : {}) }, String(req.id ?? ''), options);
    } catch (err) {
      // Refused (busy, over a quota, …): no run to follow, so the same key may be sent again.
      if (idempotencyKey !== undefined) await this.idempotent.release(caller, idempotencyKey).catch(() => undefined);
      throw err;
    }
    if (idempotencyKey !== undefined) await this.idempotent.record(caller, idempotencyKey, body, submitted);
    // The tenant comes along: a run this door cancels gives back that tenant's slot.
    const run = { ...submitted, tenantId: caller.tenantId };
    res.setHeader('X-DataAgent-Session', clientSessionId ?? run.sessionId);
    res.setHeader('X-DataAgent-Run', run.runId);
    if (body.stream) await this.stream(run, body.model, res, cancelOnLeave, includeUsage(body));
    else await this.whole(run, body.model, res, cancelOnLeave);
  }

  /** The whole answer once the run is done; a client that leaves first, or a run past DATAAGENT_SYNC_TIMEOUT_MS, cancels it. */
  private async whole(run: SubmittedRun & { tenantId: string }, model: string, res: Response, cancelOnLeave: boolean): Promise<void> {
    const answer = new AnswerText();
    let failure: ErrorEventDict | undefined;
    const gone = new AbortController();
    const leave = () => gone.abort();
    res.on('close', leave);
    try {
      const wait = await waitForDone(
        (listener) => this.runs.follow(run, 0, listener),
        (event) => {
          answer.add(event);
          if (event.event_type === 'error' && endsAnswer(event)) failure = event;
        },
        { timeoutMs: this.settings.server.syncTimeoutMs, signal: gone.signal },
      );
      if (wait.outcome !== 'done' && cancelOnLeave) await this.control.cancelStarted(run).catch(() => undefined);
      if (wait.outcome === 'aborted') return;
      if (wait.outcome === 'timeout') {
        sendError(res, new ApiError(504, 'run_timeout', cancelOnLeave ? 'The run did not finish in time and was cancelled' : 'The run did not finish in time; it goes on, and a retry with the same Idempotency-Key follows it'));
        return;
      }
      const { done } = wait;
      const error = done.cancelled ? new ApiError(409, 'run_cancelled', 'The run was cancelled before it finished', {}, NO_RETRY) : failure ? runError(failure) : undefined;
      if (error) {
        sendError(res, error);
        return;
      }
      const finishReason = finishReasonOf(done);
      const completion: ChatCompletion = {
        id: `chatcmpl-${run.runId}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [
          {
            index: 0,
            // As OpenAI answers a turn that calls tools: no content unless the model wrote some.
            message: { role: 'assistant', content: finishReason === 'tool_calls' && !answer.text ? null : answer.text, ...(finishReason === 'tool_calls' ? { tool_calls: answer.clientCalls } : {}) },
            finish_reason: finishReason,
            logprobs: null,
          },
        ],
        ...(done.usage ? { usage: openAiUsage(done.usage) } : {}),
      };
      res.json(completion);
    } finally {
      res.off('close', leave);
    }
  }

  /**
   * `chat.completion.chunk`s as server-sent events, then `[DONE]`; a client that leaves, or falls
   * more than DATAAGENT_CLIENT_BUFFER_MAX_BYTES behind (let go), cancels the run. A call to one of the client's tools goes out as OpenAI streams one (id and name,
   * then the arguments); with `includeUsage`, a last chunk with no choices carries the usage.
   */
  private async stream(run: SubmittedRun & { tenantId: string }, model: string, res: Response, cancelOnLeave: boolean, includeUsage: boolean): Promise<void> {
    const created = Math.floor(Date.now() / 1000);
    const frame = (body: Omit<ChatCompletionChunk, 'id' | 'object' | 'created' | 'model'>) => {
      const whole: ChatCompletionChunk = { id: `chatcmpl-${run.runId}`, object: 'chat.completion.chunk', created, model, ...body };
      return `data: ${JSON.stringify(whole)}\n\n`;
    };
    const chunk = (delta: ChatCompletionChunk['choices'][number]['delta'], finishReason: FinishReason | null = null) => frame({ choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }] });
    const answer = new AnswerText();
    await pipeRunEvents(res, {
      limit: this.settings.server.clientBufferMaxBytes,
      opening: [chunk({ role: 'assistant', content: '' })],
      // No other client can follow this answer: a client that leaves, or is let go, ends its run.
      ...(cancelOnLeave ? { onLeave: () => void this.control.cancelStarted(run).catch(() => undefined) } : {}),
      follow: (listener, pacing) => this.runs.follow(run, 0, listener, pacing),
      step: (event) => {
        const frames: string[] = [];
        const piece = answer.add(event);
        if (piece) frames.push(chunk({ content: piece }));
        if (event.event_type === 'tool_call' && event.client) {
          const index = answer.clientCalls.length - 1;
          const call = answer.clientCalls[index]!;
          frames.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }));
          frames.push(chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] }));
        }
        if (event.event_type === 'error' && endsAnswer(event)) frames.push(`data: ${JSON.stringify(openAiErrorBody(runError(event)))}\n\n`);
        if (event.event_type !== 'done') return { frames };
        frames.push(chunk({}, finishReasonOf(event)));
        if (includeUsage && event.usage) frames.push(frame({ choices: [], usage: openAiUsage(event.usage) }));
        frames.push('data: [DONE]\n\n');
        return { frames, ends: true };
      },
    });
  }
}

/** Tells OpenAI's SDKs not to send the request again (they retry 409, 429 and 5xx by default): each retry would be a new run. */
const NO_RETRY = { 'x-should-retry': 'false' };

/** A busy model is the client's 429 or 503, with the provider's Retry-After; anything else that ended the run is a 502. */
const BUSY_LLM: Record<string, number> = { llm_rate_limited: 429, llm_overloaded: 503 };

/** Runs that failed because of what the request asked for: the client's 400, naming the field. */
const REQUEST_ERRORS: Record<string, string> = { client_tool_conflict: 'tools' };

/** An error the client is told of: one that failed the run, or a busy model (the run may retry, the client should too). */
function endsAnswer(event: ErrorEventDict): boolean {
  return !event.recoverable || (event.error_code !== undefined && BUSY_LLM[event.error_code] !== undefined);
}

function runError(event: ErrorEventDict): ApiError {
  const code = event.error_code ?? 'run_failed';
  // A budget spent mid-run is a quota, as OpenAI answers one: 429, and when it starts again.
  if (code === 'budget_exhausted') return new ApiError(429, code, event.error, {}, event.retry_after !== undefined ? { 'Retry-After': String(Math.max(1, Math.ceil(event.retry_after))) } : NO_RETRY);
  const field = REQUEST_ERRORS[code];
  if (field) return new ApiError(400, code, event.error, { fields: { [field]: [code] } }, NO_RETRY);
  const status = BUSY_LLM[code];
  // The run failed for a reason sending it again would meet again (the model refused it, a tool broke it): no retry.
  if (!status) return new ApiError(502, code, `The run failed: ${event.error}`, {}, NO_RETRY);
  const retryAfter = event.retry_after !== undefined ? Math.max(1, Math.ceil(event.retry_after)) : 5;
  return new ApiError(status, code, event.error, {}, { 'Retry-After': String(retryAfter) });
}

function sendError(res: Response, error: ApiError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json(openAiErrorBody(error));
}

type FinishReason = ChatCompletion['choices'][number]['finish_reason'];

/** How the answer ended: at calls to the client's tools, cut short by a spent budget, or with the assistant's word. */
function finishReasonOf(done: DoneEventDict): FinishReason {
  return done.reason === 'tool_calls' ? 'tool_calls' : done.reason === 'budget' ? 'length' : 'stop';
}

/** A run's usage in OpenAI's words. */
function openAiUsage(usage: RunUsage): CompletionUsage {
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.input_tokens + usage.output_tokens,
    ...(usage.cached_input_tokens ? { prompt_tokens_details: { cached_tokens: usage.cached_input_tokens } } : {}),
    ...(usage.cost ? { cost: usage.cost, currency: usage.currency } : {}),
  };
}

function includeUsage(body: ChatCompletionRequestDto): boolean {
  return body.stream_options?.include_usage === true;
}

/** The answer as a client sees it: the model's text, a line for each tool the run used, and its calls to the client's tools. */
class AnswerText {
  text = '';
  readonly clientCalls: ClientToolCall[] = [];
  private readonly tools = new Map<string, string>();

  /** @returns the text the event adds to the answer, if any. */
  add(event: EventDict): string {
    let piece = '';
    if (event.event_type === 'text') piece = event.content;
    else if (event.event_type === 'tool_call' && event.client) this.clientCalls.push({ id: event.tool_call_id, type: 'function', function: { name: event.tool_name, arguments: wireArguments(event.tool_args) } });
    else if (event.event_type === 'tool_call') this.tools.set(event.tool_call_id, event.tool_name);
    else if (event.event_type === 'tool_result') piece = toolSummary(this.tools.get(event.tool_call_id) ?? 'tool', event.status);
    this.text += piece;
    return piece;
  }
}

function asModel(id: string): OpenAiModel {
  return { id, object: 'model', created: 0, owned_by: 'dataagent' };
}

/**
 * The request's sampling options for the run's model calls, or none given.
 * @throws ApiError 400 naming a malformed `stop` or `response_format`.
 */
function modelOptionsOf(body: ChatCompletionRequestDto): ModelOptions | undefined {
  const options: ModelOptions = {};
  if (body.temperature !== undefined) options.temperature = body.temperature;
  const limits = [body.max_tokens, body.max_completion_tokens].filter((n): n is number => n !== undefined);
  if (limits.length > 0) options.maxTokens = Math.min(...limits);
  if (body.stop !== undefined && body.stop !== null) {
    const stop = typeof body.stop === 'string' ? [body.stop] : body.stop;
    if (!Array.isArray(stop) || stop.length > 4 || !stop.every((s) => typeof s === 'string' && s.length > 0)) {
      throw new ApiError(400, 'validation_failed', 'stop must be a string or up to 4 strings', { fields: { stop: ['invalid'] } }, NO_RETRY);
    }
    options.stop = stop;
  }
  if (body.seed !== undefined) options.seed = body.seed;
  if (body.response_format !== undefined) {
    const type = body.response_format.type;
    if (type !== 'text' && type !== 'json_object' && type !== 'json_schema') {
      throw new ApiError(400, 'validation_failed', "response_format.type must be 'text', 'json_object' or 'json_schema'", { fields: { response_format: ['invalid'] } }, NO_RETRY);
    }
    options.responseFormat = { ...body.response_format, type };
  }
  return Object.keys(options).length > 0 ? options : undefined;
}
