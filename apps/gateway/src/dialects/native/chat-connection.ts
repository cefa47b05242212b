import type { Logger } from '@nestjs/common';
import type { EventDict } from '#core/events/execution-event.js';
import type { Caller } from '#core/auth/caller.js';
import { ApiError } from '../../common/api-error.js';
import { toApiError } from '../../common/api-exception.filter.js';
import { plainJson } from '../../common/plain-json.js';
import { validateDto } from '../../common/validation.js';
import type { RunsService } from '../../runs/runs.service.js';
import { ClientStalledError, gatewayErrorEvent, MessageRateLimit, slowConsumerError, waitForRoom, type ErrorEventBody } from '../../runs/client-limits.js';
import type { ControlService } from '../../runs/run-control.service.js';
import { CancelRequestDto, ChatRequestDto, ElicitationAnswerMessageDto, HitlDecisionMessageDto, ResumeRequestDto, SocketMessageDto } from './dto/chat-request.dto.js';

const MESSAGE_TYPES = ['chat', 'cancel', 'hitl_decision', 'elicitation_answer', 'resume', 'ping'];

/** How a connection answers its client; Socket.IO and plain WebSocket each implement it. */
export interface ClientSink {
  /** `raw`, when given, is the event's JSON text as published: sent as is instead of encoding `event`. */
  event(event: EventDict | ErrorEventBody, raw?: string): void;
  pong(body: { timestamp: string }): void;
  /** Bytes written to this client that it has not taken yet. */
  bufferedBytes(): number;
  /** Tells the client why (best effort: a stalled client may never read it) and closes the connection. */
  drop(reason: ErrorEventBody): void;
  /** The client's address and port, for the log lines about this connection. */
  peer?: string;
}

export interface ConnectionLimits {
  /** Bytes buffered for the client before it is dropped as a slow consumer. */
  bufferMaxBytes: number;
  /** Messages per second the client may send; a flood closes the connection. */
  messagesPerSecond: number;
}

export type MessageAck = ({ ok: true; session_id?: string; run_id?: string } & Record<string, unknown>) | { ok: false; error_code: string };


/**
 * One client connection's conversation, whatever the transport: parses {type, payload}
 * messages, submits chats, follows their runs, and reports bad input as an error event
 * without dropping the connection.
 */
export class ChatConnection {
  private readonly follows = new Map<string, () => void>();
  private readonly rate: MessageRateLimit;
  private closed = false;

  constructor(
    private readonly runs: RunsService,
    private readonly control: ControlService,
    private readonly caller: Caller,
    private readonly sink: ClientSink,
    private readonly logger: Logger,
    private readonly limits: ConnectionLimits,
    /** The session a plain-WebSocket connection is bound to (its URL path). */
    private readonly boundSessionId?: string,
  ) {
    this.rate = new MessageRateLimit(limits.messagesPerSecond);
  }

  /**
   * Handles one client message. Returns the acknowledgement: the run a chat started, or
   * the error code of a refused message (the error event is sent too).
   */
  async handle(raw: unknown): Promise<MessageAck> {
    if (this.closed) return { ok: false, error_code: 'connection_closed' };
    if (!this.admit()) return { ok: false, error_code: 'too_many_messages' };
    let sessionId = '';
    try {
      const message = await validateDto(SocketMessageDto, parse(raw));
      const payload = { ...((message.payload ?? {}) as Record<string, unknown>) };
      if (this.boundSessionId) {
        if (payload.session_id !== undefined && payload.session_id !== this.boundSessionId) {
          throw new ApiError(422, 'session_mismatch', `This connection is bound to session ${this.boundSessionId}`, { session_id: this.boundSessionId });
        }
        payload.session_id = this.boundSessionId;
      }
      sessionId = typeof payload.session_id === 'string' ? payload.session_id : '';
      if (message.type !== 'ping') await this.runs.countRequest(this.caller);
      switch (message.type) {
        case 'ping':
          this.sink.pong({ timestamp: new Date().toISOString() });
          this.checkBuffer(null, 0);
          return { ok: true };
        case 'chat':
          return await this.startChat(await validateDto(ChatRequestDto, payload));
        case 'cancel': {
          const request = await validateDto(CancelRequestDto, payload);
          return { ok: true, ...(await this.control.cancelSession(this.caller, request.session_id)) };
        }
        case 'hitl_decision': {
          const request = await validateDto(HitlDecisionMessageDto, payload);
          return { ok: true, ...(await this.control.decide(this.caller, request.request_id, request.decision, request.message)) };
        }
        case 'elicitation_answer': {
          const request = await validateDto(ElicitationAnswerMessageDto, payload);
          return { ok: true, ...(await this.control.answerElicitation(this.caller, request.request_id, request.action, request.content)) };
        }
        case 'resume': {
          const request = await validateDto(ResumeRequestDto, payload);
          const run = await this.runs.resolveRun(this.caller, request.session_id, request.run_id);
          await this.followRun(run.sessionId, run.runId, request.after_seq);
          return { ok: true, session_id: run.sessionId, run_id: run.runId };
        }
        default:
          throw new ApiError(422, 'unknown_message_type', `Unknown message type: ${message.type}`, { supported: MESSAGE_TYPES });
      }
    } catch (err) {
      return { ok: false, error_code: this.sendError(err, sessionId) };
    }
  }

  /**
   * Counts one message from the client against its rate; a client over it is dropped.
   * @returns false when the message must be ignored.
   */
  admit(): boolean {
    if (this.closed) return false;
    if (this.rate.take()) return true;
    this.drop(gatewayErrorEvent(null, 'too_many_messages', `More than ${this.limits.messagesPerSecond} messages per second; the connection was closed`, { messages_per_second: this.limits.messagesPerSecond }));
    return false;
  }

  /**
   * Drops the client when more than the buffer limit waits for it: a client that stopped
   * reading must not grow the gateway's memory. It resumes by seq when it comes back.
   */
  checkBuffer(run: { sessionId: string; runId: string } | null, lastSentSeq: number): void {
    if (this.closed || this.sink.bufferedBytes() <= this.limits.bufferMaxBytes) return;
    this.logger.warn(`dropping a slow client (${this.sink.peer ?? '?'}): more than ${this.limits.bufferMaxBytes} bytes buffered`);
    this.drop(slowConsumerError(run, lastSentSeq, this.limits.bufferMaxBytes));
  }

  private drop(reason: ErrorEventBody): void {
    if (this.closed) return;
    this.close();
    this.sink.drop(reason);
  }

  /** Stops following every run; called when the client disconnects. */
  close(): void {
    this.closed = true;
    for (const stop of this.follows.values()) stop();
    this.follows.clear();
  }

  private async startChat(request: ChatRequestDto): Promise<MessageAck> {
    const run = await this.runs.submit(this.caller, request);
    // Acknowledge at once; the follow replays from seq 0, so nothing is missed meanwhile.
    this.followRun(run.sessionId, run.runId, 0).catch((err) => this.sendError(err, run.sessionId));
    return { ok: true, session_id: run.sessionId, run_id: run.runId };
  }

  private async followRun(sessionId: string, runId: string, afterSeq: number): Promise<void> {
    this.follows.get(runId)?.();
    this.follows.delete(runId);
    let finished = false;
    let lastSent = afterSeq;
    const ready = () =>
      waitForRoom(() => this.sink.bufferedBytes(), this.limits.bufferMaxBytes, () => this.closed).catch((err: unknown) => {
        if (err instanceof ClientStalledError && !err.gone) this.drop(slowConsumerError({ sessionId, runId }, lastSent, this.limits.bufferMaxBytes));
        throw err;
      });
    const stop = await this.runs.follow({ sessionId, runId }, afterSeq, (event, live, raw) => {
      if (this.closed) return;
      this.sink.event(event, raw);
      lastSent = event.seq;
      // A replay is paced by `ready`; live events cannot wait, so a client too far behind goes.
      if (live) this.checkBuffer({ sessionId, runId }, event.seq);
      if (event.event_type === 'done') {
        finished = true;
        this.follows.get(runId)?.();
        this.follows.delete(runId);
      }
    }, { ready, onEnded: () => (finished = true) });
    if (finished || this.closed) stop();
    else this.follows.set(runId, stop);
  }

  private sendError(err: unknown, sessionId: string): string {
    if (err instanceof ClientStalledError) return 'slow_consumer';
    const error = toApiError(err);
    if (error.status === 500) this.logger.error(err instanceof Error ? err.stack ?? err.message : String(err));
    if (this.closed) return error.errorCode;
    this.sink.event(gatewayErrorEvent({ sessionId, runId: '' }, error.errorCode, error.message, { status: error.status, ...error.details }));
    this.checkBuffer(null, 0);
    return error.errorCode;
  }
}

function parse(raw: unknown): unknown {
  if (typeof raw !== 'string' && !Buffer.isBuffer(raw)) return plainJson(raw);
  let value: unknown;
  try {
    value = JSON.parse(raw.toString());
  } catch {
    throw new ApiError(400, 'invalid_json', 'Message is not valid JSON');
  }
  return plainJson(value);
}
