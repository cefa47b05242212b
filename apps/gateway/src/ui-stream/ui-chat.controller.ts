import { Body, Controller, Get, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { Caller } from '#core/auth/caller.js';
import type { EventDict } from '#core/events/execution-event.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { ChatService, type SubmittedRun } from '../chat/chat.service.js';
import { ApiError } from '../common/api-error.js';
import { CancelAnswer } from '../control/control-answers.dto.js';
import { ControlService } from '../control/control.service.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { SETTINGS } from '../infra/tokens.js';
import { SessionAccess } from '../sessions/session-access.service.js';
import { UiMessageProjection } from './ui-message-chunks.js';

/** What `useChat`'s DefaultChatTransport posts: the chat's id and its messages (UIMessage). */
interface UiChatBody {
  id?: unknown;
  messages?: unknown;
  trigger?: unknown;
}

const CHAT_ID = /^[A-Za-z0-9_-]{1,64}$/;

const UI_CHAT_BODY = {
  type: 'object',
  required: ['id', 'messages'],
  properties: {
    id: { type: 'string', description: 'The chat id (useChat `id`): the session, created on its first message' },
    messages: { type: 'array', items: { type: 'object', additionalProperties: true }, description: "useChat's UIMessage list; the last one (role user, text parts) is the new message" },
    trigger: { type: 'string', enum: ['submit-message', 'regenerate-message'] },
  },
};

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
    private readonly chat: ChatService,
    private readonly control: ControlService,
    private readonly access: SessionAccess,
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
  ) {}

  /** Starts a turn with the last user message and streams it as UI message chunks. */
  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: "Run a turn for useChat (AI SDK UI message stream v1): the chat id is the session; the last message's text is the new message" })
  @ApiBody({ schema: UI_CHAT_BODY })
  @ApiProduces('text/event-stream')
  @ApiResponse({ status: 200, content: { 'text/event-stream': { schema: UI_STREAM } } })
  async send(@CurrentCaller() caller: Caller, @Body() body: UiChatBody, @Req() req: Request, @Res() res: Response): Promise<void> {
    const chatId = typeof body.id === 'string' && CHAT_ID.test(body.id) ? body.id : undefined;
    if (!chatId) throw invalid('id', 'must be the chat id: 1-64 letters, digits, _ or -');
    const message = lastUserText(body.messages);
    const existing = await this.access.findOwned(caller, chatId);
    const run = await this.chat.submit(caller, { message, ...(existing ? { session_id: chatId } : {}) }, String(req.id ?? ''), existing ? {} : { newSessionId: chatId });
    await this.stream(run, res);
  }

  /** Resumes the chat's active run from its start (useChat `resume: true`); 204 when none is running. */
  @Get(':id/stream')
  @ApiOperation({ summary: "Resume the chat's active run as a UI message stream (useChat resume); 204 when no run is active" })
  @ApiProduces('text/event-stream')
  @ApiResponse({ status: 200, content: { 'text/event-stream': { schema: UI_STREAM } } })
  @ApiResponse({ status: 204, description: 'No run is active in the chat' })
  async resume(@CurrentCaller() caller: Caller, @Param('id') id: string, @Res() res: Response): Promise<void> {
    await this.access.getOwned(caller, id);
    let run: SubmittedRun;
    try {
      run = await this.chat.resolveRun(caller, id, undefined);
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
  stop(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<CancelAnswer> {
    return this.control.cancelSession(caller, id);
  }

  /** Writes the run's events, from its start, as UI message chunks until its `done`. */
  private async stream(run: SubmittedRun, res: Response): Promise<void> {
    const projection = new UiMessageProjection();
    let ended = false;
    let stop: (() => void) | undefined;
    const end = () => {
      if (ended) return;
      ended = true;
      stop?.();
      res.end();
    };
    res.status(200);
    res.setHeader('content-type', 'text/event-stream; charset=utf-8');
    res.setHeader('cache-control', 'no-cache, no-transform');
    res.setHeader('x-vercel-ai-ui-message-stream', 'v1');
    res.setHeader('x-accel-buffering', 'no');
    res.setHeader('x-dataagent-session', run.sessionId);
    res.setHeader('x-dataagent-run', run.runId);
    res.flushHeaders();
    const limit = this.settings.server.clientBufferMaxBytes;
    const write = (event: EventDict) => {
      if (ended) return;
      for (const chunk of projection.chunksOf(event)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      if (event.event_type === 'done') {
        res.write('data: [DONE]\n\n');
        end();
      } else if (res.writableLength > limit) {
        // A client that stopped reading is let go (it resumes), not buffered without bound.
        end();
      }
    };
    // The client leaving stops its stream, not the run.
    res.on('close', end);
    stop = await this.chat.follow(run, 0, write, { onEnded: end });
    if (ended) stop();
  }
}

/** The text of the last message, which must be the person's. */
function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages', 'must be a non-empty list of UI messages');
  const last = messages.at(-1) as { role?: unknown; parts?: unknown };
  if (last?.role !== 'user') {
    throw invalid('messages', 'the last message must be the person\'s (role user); answer an approval with POST /api/v1/hitl/{request_id}');
  }
  const parts = Array.isArray(last.parts) ? (last.parts as Array<{ type?: unknown; text?: unknown }>) : [];
  const text = parts
    .filter((p) => p?.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('');
  if (text.trim() === '') throw invalid('messages', 'the last message has no text part');
  return text;
}

function invalid(field: string, message: string): ApiError {
  return new ApiError(422, 'validation_failed', `${field} ${message}`, { fields: { [field]: [message] } });
}
