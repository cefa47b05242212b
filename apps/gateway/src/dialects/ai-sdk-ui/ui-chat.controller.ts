import { Body, Controller, Get, HttpCode, Inject, Param, Post, Req, Res, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Caller } from '#core/auth/caller.js';
import type { ChatMessage } from '#core/llm/chat-model.js';
import { CurrentCaller } from '../../auth/api-key.guard.js';
import { RunsService, type SubmitOptions, type SubmittedRun } from '../../runs/runs.service.js';
import { parseClientTools } from '../openai-wire.js';
import { ApiError } from '../../common/api-error.js';
import { pipeRunEvents, sseFrame } from '../../runs/run-event-stream.js';
import { CancelAnswer } from '../../runs/control-answers.dto.js';
import { ControlService, hitlTimedOut } from '../../runs/run-control.service.js';
import type { GatewaySettings } from '../../infra/gateway-config.js';
import { SETTINGS } from '../../infra/tokens.js';
import { SessionAccess } from '../../sessions/session-access.service.js';
import { holdMessagesToLimit } from '../../common/message-limit.js';
import { HitlRequests } from '#transport/hitl-requests.js';
import { UiMessageProjection, type UiChunk } from './ui-message-chunks.js';
import { HoldsStreamSlot } from '../../quotas/stream-slot.interceptor.js';

/** What `useChat`'s DefaultChatTransport posts: the chat's id and its messages (UIMessage). */
interface UiChatBody {
  id?: unknown;
  messages?: unknown;
  trigger?: unknown;
  /** The assistant of a new chat (the transport's `body` option); an existing chat keeps its own. */
  assistant_id?: unknown;
  /** Function tools the page runs itself (`onToolCall`), as /v1/chat/completions takes them. */
  tools?: unknown;
}

/** An approval the person answered in the page: a tool part in state `approval-responded`. */
interface ApprovalResponse {
  id: string;
  approved: boolean;
  reason?: string;
}

const CHAT_ID = /^[A-Za-z0-9_-]{1,64}$/;

const UI_CHAT_BODY = {
  type: 'object',
  required: ['id', 'messages'],
  properties: {
    id: { type: 'string', description: 'The chat id (useChat `id`): the session, created on its first message' },
    messages: { type: 'array', items: { type: 'object', additionalProperties: true }, description: "useChat's UIMessage list; the last one (role user, text parts) is the new message" },
    trigger: { type: 'string', enum: ['submit-message', 'regenerate-message'] },
    assistant_id: { type: 'string', maxLength: 64, description: 'The assistant of a new chat (GET /api/v1/agents); default `default`' },
    tools: {
      type: 'array',
      items: { type: 'object', additionalProperties: true },
      description: "Function tools the page runs itself (`{type: 'function', function: {name, description, parameters}}`); a call to one ends the stream with finish `tool-calls`, and the page's outputs (addToolOutput) in the next request continue the chat",
    },
  },
};

/** The last frame of a UI message stream. */
const UI_STREAM_END = 'data: [DONE]\n\n';

const UI_STREAM = {
  type: 'string',
  description: 'AI SDK UI message stream v1 (header `x-vercel-ai-ui-message-stream: v1`): `data: <chunk JSON>` lines, ending with `data: [DONE]`',
};

/**
 * The AI SDK's UI message stream (protocol v1), for `useChat` with its DefaultChatTransport as
 * it is: the chat id is the session, the stream a projection of the run's event log. A dropped
 * connection is not a stop (the run goes on, and `resume` picks it up); stop is its own request.
 */
@ApiTags('ai-sdk')
@Controller('ui/chat')
export class UiChatController {
  constructor(
    private readonly runs: RunsService,
    private readonly control: ControlService,
    private readonly access: SessionAccess,
    private readonly hitl: HitlRequests,
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
  ) {}

  /**
   * Starts a turn with the last user message and streams it as UI message chunks; or, when the
   * last message is the assistant's with approvals answered (`addToolApprovalResponse`), records
   * those decisions and streams the same run on from the approval it stopped at.
   */
  @UseInterceptors(HoldsStreamSlot)
  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: "Run a turn for useChat (AI SDK UI message stream v1): the chat id is the session; the last message's text is the new message, or its answered approvals continue the waiting run" })
  @ApiBody({ schema: UI_CHAT_BODY })
  @ApiProduces('text/event-stream')
  @ApiResponse({ status: 200, content: { 'text/event-stream': { schema: UI_STREAM } } })
  async send(@CurrentCaller() caller: Caller, @Body() body: UiChatBody, @Req() req: Request, @Res() res: Response): Promise<void> {
    const chatId = typeof body.id === 'string' && CHAT_ID.test(body.id) ? body.id : undefined;
    if (!chatId) throw invalid('id', 'must be the chat id: 1-64 letters, digits, _ or -');
    holdMessagesToLimit(body.messages, 'messages', this.settings.server.maxMessageBytes);
    const approvals = answeredApprovals(body.messages);
    if (approvals.length > 0) return this.continueAfter(caller, chatId, approvals, res);
    if (body.assistant_id !== undefined && typeof body.assistant_id !== 'string') throw invalid('assistant_id', 'must be an assistant id');
    const clientTools = parseClientTools(body.tools, undefined);
    const toolResults = clientToolOutputs(body.messages, new Set(clientTools.map((t) => t.name)));
    const message = toolResults.length > 0 ? '' : lastUserText(body.messages);
    const { sessionId, session: existing } = await this.access.findNamed(caller, chatId);
    if (toolResults.length > 0 && !existing) throw ApiError.notFound('session', chatId);
    const request = { message, ...(existing ? { session_id: sessionId } : {}), ...(typeof body.assistant_id === 'string' && !existing ? { assistant_id: body.assistant_id } : {}) };
    const options: SubmitOptions = {
      ...(existing ? {} : { clientSessionId: chatId }),
      ...(clientTools.length > 0 ? { clientTools } : {}),
      ...(toolResults.length > 0 ? { toolResults } : {}),
    };
    const run = await this.runs.submit(caller, request, String(req.id ?? ''), options);
    await this.stream(run, res);
  }

  /** Resumes the chat's active run from its start (useChat `resume: true`); 204 when none is running. */
  @UseInterceptors(HoldsStreamSlot)
  @Get(':id/stream')
  @ApiOperation({ summary: "Resume the chat's active run as a UI message stream (useChat resume); 204 when no run is active" })
  @ApiProduces('text/event-stream')
  @ApiResponse({ status: 200, content: { 'text/event-stream': { schema: UI_STREAM } } })
  @ApiResponse({ status: 204, description: 'No run is active in the chat' })
  async resume(@CurrentCaller() caller: Caller, @Param('id') id: string, @Res() res: Response): Promise<void> {
    const { sessionId } = await this.access.getNamed(caller, id);
    let run: SubmittedRun;
    try {
      run = await this.runs.resolveRun(caller, sessionId, undefined);
    } catch (err) {
      if (err instanceof ApiError && err.errorCode === 'no_active_run') {
        res.status(204).end();
        return;
      }
      throw err;
    }
    await this.stream(run, res);
  }

  /** Stops the chat's active run: its stream ends with `abort`. */
  @Post(':id/stop')
  @HttpCode(200)
  @ApiOperation({ summary: "Stop the chat's active run (a dropped stream is not a stop)" })
  @ApiOkResponse({ type: CancelAnswer })
  async stop(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<CancelAnswer> {
    const { sessionId } = await this.access.getNamed(caller, id);
    return { ...(await this.control.cancelSession(caller, sessionId)), session_id: id };
  }

  /**
   * Records the person's answers to the run's approvals (each once; one already decided, say by
   * another tab, is taken as it stands; one that expired unanswered is refused, 409 `timeout`)
   * and streams the run on from the last one answered.
   */
  private async continueAfter(caller: Caller, chatId: string, approvals: ApprovalResponse[], res: Response): Promise<void> {
    const { sessionId } = await this.access.getNamed(caller, chatId);
    for (const approval of approvals) {
      const record = await this.hitl.get(approval.id);
      // An approval of another chat is not this chat's to answer, even when it is the caller's own.
      if (record && record.sessionId !== sessionId) throw ApiError.notFound('hitl_request', approval.id);
      // Expired unanswered: the approval comes too late, as at every door (409 timeout).
      if (record?.status === 'timeout') throw hitlTimedOut(approval.id);
      if (record?.status !== 'pending') continue;
      await this.control
        .decide(caller, approval.id, approval.approved ? 'approve' : 'reject', approval.reason ?? '')
        .catch((err: unknown) => {
          if (!(err instanceof ApiError && err.errorCode === 'hitl_already_decided')) throw err;
        });
    }
    const last = approvals.at(-1)!;
    const record = await this.hitl.get(last.id);
    if (!record || record.sessionId !== sessionId) throw ApiError.notFound('hitl_request', last.id);
    await this.stream({ sessionId, runId: record.runId }, res, last.id);
  }

  /**
   * Writes the run's events as UI message chunks until its `done`, or until it waits on an
   * approval nobody has answered yet: that ends this stream with `finish`, and the answer
   * (`addToolApprovalResponse`) is the next request. With `after`, the chunks start past that
   * approval's request, continuing the assistant message the page already has.
   */
  private async stream(run: SubmittedRun, res: Response, after?: string): Promise<void> {
    const projection = new UiMessageProjection();
    let skipping = after !== undefined;
    const frames = (chunks: UiChunk[]) => chunks.map((chunk) => sseFrame(chunk));
    await pipeRunEvents(res, {
      headers: { 'x-vercel-ai-ui-message-stream': 'v1', 'x-dataagent-session': run.sessionId, 'x-dataagent-run': run.runId },
      opening: skipping ? frames([{ type: 'start', messageId: run.runId }, { type: 'start-step' }]) : [],
      limit: this.settings.server.clientBufferMaxBytes,
      follow: (listener, pacing) => this.runs.follow(run, 0, listener, pacing),
      step: (event) => {
        const chunks = projection.chunksOf(event);
        if (skipping) {
          if (event.event_type === 'hitl_request' && event.request_id === after) skipping = false;
          return { frames: [] };
        }
        if (event.event_type === 'done') return { frames: [...frames(chunks), UI_STREAM_END], ends: true };
        if (event.event_type !== 'hitl_request') return { frames: frames(chunks) };
        // The run waits for the person: this stream is done, and the answer is the next request.
        return this.hitl.get(event.request_id).then((record) =>
          record?.status === 'pending'
            ? { frames: [...frames(chunks), ...frames([{ type: 'finish-step' }, { type: 'finish', finishReason: 'tool-calls' }]), UI_STREAM_END], ends: true }
            : { frames: frames(chunks) },
        );
      },
    });
  }
}

/**
 * The approvals answered in the last message, when it is the assistant's: its tool parts in
 * state `approval-responded` (what `addToolApprovalResponse` leaves for the next request).
 */
function answeredApprovals(messages: unknown): ApprovalResponse[] {
  if (!Array.isArray(messages)) return [];
  const last = messages.at(-1) as { role?: unknown; parts?: unknown } | undefined;
  if (last?.role !== 'assistant' || !Array.isArray(last.parts)) return [];
  return (last.parts as Array<{ state?: unknown; approval?: { id?: unknown; approved?: unknown; reason?: unknown } }>).flatMap((part) => {
    const approval = part?.approval;
    if (part?.state !== 'approval-responded' || typeof approval?.id !== 'string' || typeof approval.approved !== 'boolean') return [];
    return [{ id: approval.id, approved: approval.approved, ...(typeof approval.reason === 'string' ? { reason: approval.reason } : {}) }];
  });
}

/**
 * The outputs the page gave its own tools (addToolOutput): in the last message, when it is the
 * assistant's, the tool parts of its last step that name one of `clientTools` and hold an output.
 * They are the next run's input, in place of a user message.
 */
function clientToolOutputs(messages: unknown, clientTools: Set<string>): ChatMessage[] {
  if (!Array.isArray(messages) || clientTools.size === 0) return [];
  const last = messages.at(-1) as { role?: unknown; parts?: unknown } | undefined;
  if (last?.role !== 'assistant' || !Array.isArray(last.parts)) return [];
  const parts = last.parts as Array<{ type?: unknown; toolName?: unknown; toolCallId?: unknown; state?: unknown; output?: unknown; errorText?: unknown }>;
  const lastStep = parts.slice(parts.findLastIndex((p) => p?.type === 'step-start') + 1);
  return lastStep.flatMap((part) => {
    const name = part?.type === 'dynamic-tool' ? part.toolName : typeof part?.type === 'string' && part.type.startsWith('tool-') ? part.type.slice(5) : undefined;
    if (typeof name !== 'string' || !clientTools.has(name) || typeof part.toolCallId !== 'string') return [];
    if (part.state === 'output-available') return [{ role: 'tool' as const, toolCallId: part.toolCallId, name, content: typeof part.output === 'string' ? part.output : JSON.stringify(part.output ?? null) }];
    if (part.state === 'output-error') return [{ role: 'tool' as const, toolCallId: part.toolCallId, name, content: JSON.stringify({ error: String(part.errorText ?? 'failed') }) }];
    return [];
  });
}

/** The text of the last message, which must be the person's. */
function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages', 'must be a non-empty list of UI messages');
  const last = messages.at(-1) as { role?: unknown; parts?: unknown };
  if (last?.role !== 'user') {
    throw invalid('messages', 'the last message must be the person\'s (role user), or the assistant\'s with its approvals answered');
  }
  const parts = Array.isArray(last.parts) ? (last.parts as Array<{ type?: unknown; text?: unknown }>) : [];
  const text = parts
    .filter((p) => p?.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('');
  if (text.trim() === '') throw invalid('messages', 'the last message has no text part');
  return text;
}

const invalid = ApiError.invalidField;
