import { Body, Controller, Delete, Get, Inject, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { DEFAULT_ASSISTANT_ID, findAssistant } from '#core/config/assistant-catalog.js';
import { ApiError } from '../common/api-error.js';
import type { Caller } from '#core/auth/caller.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { ControlService } from '../runs/run-control.service.js';
import { STORE } from '../infra/tokens.js';
import { McpReleases } from '../mcp/mcp-releases.service.js';
import { Quotas } from '../quotas/quotas.service.js';
import { MessageList } from './message-view.dto.js';
import { SessionAccess, sessionView } from './session-access.service.js';
import { SessionDeleted, SessionDetail, SessionList, SessionView } from './session-view.dto.js';

export class PageQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 50 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit = 50;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, default: 0 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(1_000_000_000)
  offset = 0;
}

export class CreateSessionDto {
  // The default is told, not declared: openapi-typescript makes a property with a `default` required, in request bodies too.
  @ApiPropertyOptional({ description: `Default "${DEFAULT_ASSISTANT_ID}"; GET /api/v1/agents lists them`, maxLength: 64 })
  @IsOptional() @IsString() @MaxLength(64)
  assistant_id?: string;

  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional() @IsString() @MaxLength(200)
  title?: string;
}

export class UpdateSessionDto {
  @ApiProperty({ maxLength: 200 })
  @IsString() @MaxLength(200)
  title: string;
}

/**
 * The caller's sessions. `:id` is a session's id, or the id the caller chose for one through a
 * dialect (an AG-UI thread, a useChat id, an X-DataAgent-Session, an A2A context), which names
 * the caller's own session only (SessionAccess.findNamed).
 */
@Controller('sessions')
export class SessionsController {
  constructor(
    @Inject(STORE) private readonly store: ConversationStore,
    private readonly access: SessionAccess,
    private readonly control: ControlService,
    private readonly mcpReleases: McpReleases,
    private readonly quotas: Quotas,
  ) {}

  /** The caller's sessions, most recently active first. */
  @Get()
  @ApiOperation({ summary: "The caller's sessions, most recently active first" })
  @ApiOkResponse({ type: SessionList })
  async list(@CurrentCaller() caller: Caller, @Query() page: PageQueryDto): Promise<SessionList> {
    const sessions = await this.store.sessions.listByUser(caller.tenantId, caller.userId, page);
    return { sessions: sessions.map(sessionView), limit: page.limit, offset: page.offset };
  }

  /** Creates an empty session (plain WebSocket clients connect to /ws/chat/{session_id}). */
  @Post()
  @ApiOperation({ summary: 'Create an empty session (plain WebSocket clients connect to /ws/chat/{session_id})' })
  @ApiCreatedResponse({ type: SessionView })
  async create(@CurrentCaller() caller: Caller, @Body() body: CreateSessionDto): Promise<SessionView> {
    const assistantId = body.assistant_id ?? DEFAULT_ASSISTANT_ID;
    if (!findAssistant(assistantId)) throw ApiError.notFound('assistant', assistantId);
    await this.quotas.admitSession(caller);
    const session = await this.store.sessions.create({ tenantId: caller.tenantId, userId: caller.userId, assistantId, title: body.title ?? '' });
    return sessionView(session);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One session with its message count' })
  @ApiOkResponse({ type: SessionDetail })
  async get(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<SessionDetail> {
    const session = await this.access.getNamed(caller, id);
    return { ...sessionView(session), message_count: await this.store.messages.count(session.sessionId) };
  }

  /** Renames the session (the title a chat list shows). */
  @Patch(':id')
  @ApiOperation({ summary: 'Rename the session' })
  @ApiOkResponse({ type: SessionView })
  async update(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: UpdateSessionDto): Promise<SessionView> {
    const { sessionId } = await this.access.getNamed(caller, id);
    const session = await this.store.sessions.update(sessionId, { title: body.title.trim() });
    if (!session) throw ApiError.notFound('session', id);
    return sessionView(session);
  }

  /** Deletes the session with its history and run records; its active runs are cancelled first. */
  @Delete(':id')
  @ApiOperation({ summary: 'Delete the session with its history and runs (its active runs are cancelled first)' })
  @ApiOkResponse({ type: SessionDeleted })
  async remove(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<SessionDeleted> {
    const { sessionId } = await this.access.getNamed(caller, id);
    // The worker stops at its next step; rows it still writes are purged when its run ends.
    await this.control.cancelSession(caller, sessionId);
    await this.store.sessions.delete(sessionId);
    await this.mcpReleases.sessionsEnded([caller]);
    return { session_id: id, deleted: true };
  }

  /** The session's messages, oldest first. */
  @Get(':id/messages')
  @ApiOperation({ summary: "The session's messages, oldest first" })
  @ApiOkResponse({ type: MessageList })
  async messages(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() page: PageQueryDto): Promise<MessageList> {
    const { sessionId } = await this.access.getNamed(caller, id);
    const [messages, total] = await Promise.all([this.store.messages.list(sessionId, page), this.store.messages.count(sessionId)]);
    return {
      session_id: id,
      total,
      limit: page.limit,
      offset: page.offset,
      messages: messages.map((m) => ({
        message_id: m.messageId,
        session_id: m.sessionId,
        run_id: m.runId,
        role: m.role,
        content: m.content,
        ...(Object.keys(m.metadata).length ? { metadata: m.metadata } : {}),
        created_at: m.createdAt.toISOString(),
      })),
    };
  }
}
