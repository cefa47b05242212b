import { Body, Controller, HttpCode, Param, Post, Req, UseInterceptors } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { Request } from 'express';
import type { Caller } from '#core/auth/caller.js';
import { CurrentCaller } from '../../auth/api-key.guard.js';
import { CancelAnswer } from '../../runs/control-answers.dto.js';
import { ControlService } from '../../runs/run-control.service.js';
import { RunsService } from '../../runs/runs.service.js';
import { ChatAnswer } from './dto/chat-answer.dto.js';
import { ChatRequestDto } from './dto/chat-request.dto.js';
import { RUN_EVENT_VIEWS } from './dto/run-event.dto.js';
import { HoldsStreamSlot } from '../../quotas/stream-slot.interceptor.js';

@Controller('chat')
export class ChatController {
  constructor(private readonly runs: RunsService, private readonly control: ControlService) {}

  /** Runs one chat turn and answers when it is done: {session_id, run_id, events}. */
  @Post()
  @UseInterceptors(HoldsStreamSlot)
  @HttpCode(200)
  @ApiOperation({ summary: 'Run one chat turn and answer when it is done: {session_id, run_id, events}' })
  @ApiExtraModels(...RUN_EVENT_VIEWS)
  @ApiOkResponse({ type: ChatAnswer })
  send(@CurrentCaller() caller: Caller, @Body() body: ChatRequestDto, @Req() req: Request): Promise<ChatAnswer> {
    return this.runs.chatAndWait(caller, body, String(req.id ?? ''));
  }

  /** Stops the session's active run: {cancelled: true, run_ids} or {cancelled: false, reason}. */
  @Post(':sessionId/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: "Stop the session's active run" })
  @ApiOkResponse({ type: CancelAnswer })
  cancel(@CurrentCaller() caller: Caller, @Param('sessionId') sessionId: string): Promise<CancelAnswer> {
    return this.control.cancelSession(caller, sessionId);
  }
}
