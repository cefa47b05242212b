import { Body, Controller, Get, Headers, HttpCode, Inject, Logger, type OnApplicationShutdown, Param, Post, Query, Req, Res, UseInterceptors } from '@nestjs/common';
import { ApiCreatedResponse, ApiExtraModels, ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiQuery } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { MAX_SEQ } from '#core/events/execution-event.js';
import type { Caller } from '#core/auth/caller.js';
import { Metrics } from '#telemetry/metrics.js';
import { AcceptsStreamTicket, CurrentCaller } from '../../auth/api-key.guard.js';
import { StreamTickets } from '../../auth/stream-tickets.service.js';
import { API_PREFIX } from '../../common/api-prefix.js';
import { ApiError } from '../../common/api-error.js';
import { pipeRunEvents, sseEventName, sseFrame } from '../../runs/run-event-stream.js';
import type { GatewaySettings } from '../../infra/gateway-config.js';
import { SETTINGS } from '../../infra/tokens.js';
import { gatewayErrorEvent, peerOf, slowConsumerError } from '../../runs/client-limits.js';
import { RunsService, type SubmittedRun } from '../../runs/runs.service.js';
import { ChatRequestDto } from './dto/chat-request.dto.js';
import { RUN_EVENT_VIEWS } from './dto/run-event.dto.js';
import { StreamTicketDto } from './dto/stream-ticket.dto.js';
import { HoldsStreamSlot } from '../../quotas/stream-slot.interceptor.js';

/** The body of an event stream, for the OpenAPI document: each `data` is one of the run event schemas. */
const EVENT_STREAM = {
  description:
    'Server-Sent Events, one per run event: `id: <run_id>:<seq>`, `event: <event_type>` (`run_error` for an `error`), `data: <the event as JSON>` (the `*EventView` schemas, by `event_type`). ' +
    'The stream ends after `done`.',
  schema: { type: 'string' },
} as const;

/**
 * Server-Sent Events for HTTP clients: each event's id is `<run_id>:<seq>`, so Last-Event-ID
 * resumes; its name is its event_type, but `run_error` for an `error` (see sseEventName).
 * Browsers, whose EventSource sends no header, open a run's stream with a stream ticket.
 */
@Controller()
export class EventStreamController implements OnApplicationShutdown {
  /** Open streams, ended on shutdown so the gateway can stop; clients resume elsewhere by Last-Event-ID. */
  private readonly open = new Set<() => void>();
  private readonly logger = new Logger('sse');

  constructor(
    private readonly runs: RunsService,
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
    private readonly metrics: Metrics,
    private readonly tickets: StreamTickets,
  ) {}

  onApplicationShutdown(): void {
    for (const end of [...this.open]) end();
  }

  /** Runs one chat turn and streams its events as text/event-stream until done. */
  @UseInterceptors(HoldsStreamSlot)
  @Post('chat/stream')
  @HttpCode(200)
  @ApiOperation({ summary: 'Run one chat turn and stream its events as Server-Sent Events until done' })
  @ApiProduces('text/event-stream')
  @ApiExtraModels(...RUN_EVENT_VIEWS)
  @ApiOkResponse(EVENT_STREAM)
  async stream(@CurrentCaller() caller: Caller, @Body() body: ChatRequestDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    const run = await this.runs.submit(caller, body, String(req.id ?? ''));
    await this.pipe(run, 0, res);
  }

  /**
   * A short-lived ticket that opens this run's event stream without a key in the request: for a
   * browser's EventSource, which cannot send X-API-Key. Only the run's owner gets one (404 otherwise).
   */
  @Post('runs/:runId/stream-tickets')
  @HttpCode(201)
  @ApiOperation({ summary: "A short-lived ticket that opens the run's event stream (`?ticket=`) for clients that cannot send X-API-Key, such as a browser's EventSource" })
  @ApiCreatedResponse({ type: StreamTicketDto })
  async ticket(@CurrentCaller() caller: Caller, @Param('runId') runId: string): Promise<StreamTicketDto> {
    await this.runs.resolveRun(caller, undefined, runId);
    const path = `/${API_PREFIX}/runs/${encodeURIComponent(runId)}/events`;
    const issued = await this.tickets.issue(caller, path);
    return { ticket: issued.ticket, run_id: runId, url: `${path}?ticket=${issued.ticket}`, expires_at: issued.expiresAt.toISOString(), expires_in: issued.expiresInSeconds };
  }

  /** Replays a run's events after Last-Event-ID (or ?after_seq), then streams live ones until done. */
  @UseInterceptors(HoldsStreamSlot)
  @Get('runs/:runId/events')
  @AcceptsStreamTicket()
  @ApiOperation({ summary: "Replay a run's events after Last-Event-ID (or after_seq), then stream live ones until done; 204 when the run had already ended there. A run's `error` events are named `run_error` on this stream" })
  @ApiProduces('text/event-stream')
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: '`<run_id>:<seq>` of the last event received' })
  @ApiQuery({ name: 'after_seq', required: false, type: Number, description: 'The last seq received, for clients that cannot send Last-Event-ID' })
  @ApiExtraModels(...RUN_EVENT_VIEWS)
  @ApiOkResponse(EVENT_STREAM)
  @ApiNoContentResponse({ description: 'The run had ended at that position: nothing more will come (an EventSource stops reconnecting)' })
  async resume(
    @CurrentCaller() caller: Caller,
    @Param('runId') runId: string,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Query('after_seq') afterSeqQuery: unknown,
    @Res() res: Response,
  ): Promise<void> {
    const afterSeq = parseAfterSeq(runId, lastEventId, afterSeqQuery);
    const run = await this.runs.resolveRun(caller, undefined, runId);
    await this.pipe(run, afterSeq, res);
  }

  /**
   * Streams the run to `res` through the one writer until its done, the client leaves, or the
   * client falls more than DATAAGENT_CLIENT_BUFFER_MAX_BYTES behind (then a `slow_consumer` error
   * ends the stream). A replay waits for the client; a run that had ended at the position asked
   * for answers 204, which tells an EventSource to stop reconnecting.
   */
  private async pipe(run: SubmittedRun, afterSeq: number, res: Response): Promise<void> {
    const limit = this.settings.server.clientBufferMaxBytes;
    const sockets = this.metrics.openSockets.labels('sse');
    let lastSent = afterSeq;
    let end: (() => void) | undefined;
    await pipeRunEvents(res, {
      limit,
      follow: (listener, pacing) => this.runs.follow(run, afterSeq, listener, pacing),
      step: (event, raw) => {
        lastSent = event.seq;
        return { frames: [`id: ${event.run_id}:${event.seq}\nevent: ${sseEventName(event.event_type)}\ndata: ${raw ?? JSON.stringify(event)}\n\n`], ends: event.event_type === 'done' };
      },
      pacedReplay: true,
      noContentWhenEnded: true,
      slowFrames: () => {
        this.logger.warn(`dropping a slow client (${peerOf(res.socket)}): more than ${limit} bytes buffered`);
        return [sseFrame(slowConsumerError(run, lastSent, limit), sseEventName('error'))];
      },
      failedFrames: () => [sseFrame(gatewayErrorEvent(run, 'stream_failed', 'The event stream failed; resume with Last-Event-ID'), sseEventName('error'))],
      onOpen: (ends) => {
        end = ends;
        this.open.add(ends);
        sockets.inc();
      },
      onClose: () => {
        if (end && this.open.delete(end)) sockets.dec();
      },
    });
  }
}

function parseAfterSeq(runId: string, lastEventId: string | undefined, query: unknown): number {
  if (lastEventId) {
    const match = /^(.+):(\d{1,10})$/.exec(lastEventId.trim());
    if (!match || match[1] !== runId || Number(match[2]) > MAX_SEQ) throw new ApiError(400, 'invalid_last_event_id', 'Last-Event-ID must be <run_id>:<seq> of this run');
    return Number(match[2]);
  }
  if (query === undefined) return 0;
  if (typeof query !== 'string' || !/^\d{1,10}$/.test(query) || Number(query) > MAX_SEQ) {
    throw new ApiError(422, 'validation_failed', `after_seq must be an integer from 0 to ${MAX_SEQ}`, { fields: { after_seq: [`must be an integer from 0 to ${MAX_SEQ}`] } });
  }
  return Number(query);
}
