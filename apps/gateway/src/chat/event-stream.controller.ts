import { Body, Controller, Get, Headers, type OnApplicationShutdown, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { EventDict } from '#core/events/execution-event.js';
import type { Caller } from '#core/session/caller.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { ApiError } from '../common/api-error.js';
import { ChatService, type SubmittedRun } from './chat.service.js';
import { ChatRequestDto } from './dto/chat-request.dto.js';

/** Server-Sent Events for HTTP clients: each event's id is `<run_id>:<seq>`, so Last-Event-ID resumes. */
@Controller()
export class EventStreamController implements OnApplicationShutdown {
  /** Open streams, ended on shutdown so the gateway can stop; clients resume elsewhere by Last-Event-ID. */
  private readonly open = new Set<() => void>();

  constructor(private readonly chat: ChatService) {}

  onApplicationShutdown(): void {
    for (const end of [...this.open]) end();
  }

  /** Runs one chat turn and streams its events as text/event-stream until done. */
  @Post('chat/stream')
  async stream(@CurrentCaller() caller: Caller, @Body() body: ChatRequestDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    const run = await this.chat.submit(caller, body, String(req.id ?? ''));
    await this.pipe(run, 0, req, res);
  }

  /** Replays a run's events after Last-Event-ID (or ?after_seq), then streams live ones until done. */
  @Get('runs/:runId/events')
  async resume(
    @CurrentCaller() caller: Caller,
    @Param('runId') runId: string,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Query('after_seq') afterSeqQuery: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const run = await this.chat.resolveRun(caller, undefined, runId);
    await this.pipe(run, parseAfterSeq(runId, lastEventId, afterSeqQuery), req, res);
  }

  private async pipe(run: SubmittedRun, afterSeq: number, req: Request, res: Response): Promise<void> {
    res.status(200).set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    res.flushHeaders();
    let stop: (() => void) | undefined;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      this.open.delete(end);
      stop?.();
      res.end();
    };
    this.open.add(end);
    const write = (event: EventDict) => {
      if (ended) return;
      res.write(`id: ${event.run_id}:${event.seq}\nevent: ${event.event_type}\ndata: ${JSON.stringify(event)}\n\n`);
      if (event.event_type === 'done') end();
    };
    req.on('close', end);
    stop = await this.chat.follow(run, afterSeq, write);
    if (ended) stop();
  }
}

function parseAfterSeq(runId: string, lastEventId: string | undefined, query: string | undefined): number {
  if (lastEventId) {
    const match = /^(.+):(\d+)$/.exec(lastEventId.trim());
    if (!match || match[1] !== runId) throw new ApiError(400, 'invalid_last_event_id', 'Last-Event-ID must be <run_id>:<seq> of this run');
    return Number(match[2]);
  }
  if (query === undefined) return 0;
  if (!/^\d+$/.test(query)) throw new ApiError(422, 'validation_failed', 'after_seq must be a non-negative integer', { fields: { after_seq: ['must be a non-negative integer'] } });
  return Number(query);
}
