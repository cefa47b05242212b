import type { DoneEventDict, EventDict, HitlRequestEventDict } from '#core/events/execution-event.js';
import { toolCallOfRequest } from '#core/hitl/approval-request-id.js';

/**
 * Where a DataAgent event came from, on every AG-UI event it becomes (`metadata.dataagent`):
 * the run and the event's `seq`. HttpAgent folds event metadata into the messages it builds, so
 * the conversation a client sends back carries the cursor it has read to (see `cursorOf`).
 */
export interface DataAgentMark {
  run_id: string;
  seq?: number;
  session_id?: string;
}

interface Base<T extends string> {
  type: T;
  timestamp?: number;
  metadata: { dataagent: DataAgentMark } & Record<string, unknown>;
}

/** An AG-UI 1.0 interrupt (`RunFinishedInterruptOutcome.interrupts[]`). */
export interface AgUiInterrupt {
  id: string;
  reason: string;
  message?: string;
  toolCallId?: string;
  responseSchema?: Record<string, unknown>;
  expiresAt?: string;
  metadata?: Record<string, unknown>;
}

export type AgUiRunOutcome = { type: 'success'; pendingToolCallIds?: string[] } | { type: 'interrupt'; interrupts: AgUiInterrupt[] } | { type: 'cancelled' };

/** The AG-UI 1.0 events this dialect sends, shaped as `@ag-ui/core` types them. */
export type AgUiEvent =
  | (Base<'RUN_STARTED'> & { threadId: string; runId: string; protocolVersion: string })
  | (Base<'RUN_FINISHED'> & { threadId: string; runId: string; outcome: AgUiRunOutcome; usage?: Array<{ inputTokens: number; outputTokens: number; totalTokens: number }> })
  | (Base<'RUN_ERROR'> & { message: string; code: string })
  | (Base<'TEXT_MESSAGE_START'> & { messageId: string; role: 'assistant' })
  | (Base<'TEXT_MESSAGE_CONTENT'> & { messageId: string; delta: string })
  | (Base<'TEXT_MESSAGE_END'> & { messageId: string })
  | (Base<'TOOL_CALL_START'> & { toolCallId: string; toolCallName: string; parentMessageId?: string })
  | (Base<'TOOL_CALL_ARGS'> & { toolCallId: string; delta: string })
  | (Base<'TOOL_CALL_END'> & { toolCallId: string })
  | (Base<'TOOL_CALL_RESULT'> & { messageId: string; toolCallId: string; content: string; role: 'tool' })
  | (Base<'CUSTOM'> & { name: string; value: unknown });

/** An event without the fields every event gets from the log entry it comes from. */
type AgUiEventBody = AgUiEvent extends infer E ? (E extends AgUiEvent ? Omit<E, 'metadata' | 'timestamp'> : never) : never;

/** The AG-UI protocol version this dialect speaks (RUN_STARTED.protocolVersion). */
export const AG_UI_PROTOCOL_VERSION = '1.0';

/**
 * Where an AG-UI run starts reading its DataAgent run's log. The log is replayed from its start
 * (so the projection knows which text message is open), and nothing is sent before the point:
 * - `afterSeq`: the last event the client has (a reconnect after a cut connection);
 * - `afterRequest`: the approval this run answers (the run that carries AG-UI `resume`).
 */
export interface ResumePoint {
  afterSeq: number;
  afterRequest?: string;
}

/** What one DataAgent event becomes: the AG-UI events to send, and whether the AG-UI run ends with them. */
export interface Projected {
  events: AgUiEvent[];
  ends: boolean;
}

/**
 * Projects a DataAgent run's event log onto one AG-UI run (the thread is the session): text
 * events become one text message per stretch of text, a tool call its START/ARGS/END (with its
 * RESULT when the assistant ran it; a call to the client's own tool has none, and ends the run
 * with it pending), an approval ends the AG-UI run with an interrupt outcome (the DataAgent run
 * waits), and `done` ends it finished or cancelled; a fatal error ends it with RUN_ERROR. Events
 * at or before the resume point update the projection's state but send nothing, and the text
 * message open at that point is opened again with the same id, so the client's message goes on
 * where it stood. The log stays the only record; this keeps only which message is open.
 */
export class AgUiProjection {
  private texts = 0;
  private openText?: string;
  /** The text message of the current model turn: a tool call the model makes after text belongs to it. */
  private turnMessage?: string;
  private readonly pendingCalls: string[] = [];
  private waiting: boolean;
  private requestSeen: boolean;

  constructor(
    private readonly threadId: string,
    private readonly runId: string,
    private readonly from: ResumePoint = { afterSeq: 0 },
  ) {
    this.requestSeen = from.afterRequest === undefined;
    this.waiting = from.afterSeq > 0 || from.afterRequest !== undefined;
  }

  /** RUN_STARTED of the AG-UI run (`runId` is the client's), naming the DataAgent session and run it reads. */
  started(run: { sessionId: string; runId: string }): AgUiEvent {
    return { type: 'RUN_STARTED', threadId: this.threadId, runId: this.runId, protocolVersion: AG_UI_PROTOCOL_VERSION, timestamp: Date.now(), metadata: { dataagent: { run_id: run.runId, session_id: run.sessionId } } };
  }

  /** What `event` (the next of the log, in `seq` order) sends. */
  next(event: EventDict): Projected {
    const endsRun = event.event_type === 'done' || (event.event_type === 'error' && !event.recoverable);
    const ends = endsRun || event.event_type === 'hitl_request';
    if (!this.waiting) return { events: this.eventsOf(event), ends };
    // Events the client has: at or before its cursor, and up to the approval it answers.
    const had = !this.requestSeen || event.seq <= this.from.afterSeq;
    if (event.event_type === 'hitl_request' && event.request_id === this.from.afterRequest) this.requestSeen = true;
    if (had) {
      const events = this.eventsOf(event);
      // An approval the client has answered does not end this run; the run's end always does.
      return endsRun ? { events, ends } : { events: [], ends: false };
    }
    this.waiting = false;
    const reopened: AgUiEvent[] = this.openText ? [this.mark(event, { type: 'TEXT_MESSAGE_START', messageId: this.openText, role: 'assistant' })] : [];
    return { events: [...reopened, ...this.eventsOf(event)], ends };
  }

  private eventsOf(event: EventDict): AgUiEvent[] {
    switch (event.event_type) {
      case 'text': {
        if (!event.content) return [];
        const opened: AgUiEvent[] = [];
        if (!this.openText) {
          this.openText = `${event.run_id}:text:${++this.texts}`;
          this.turnMessage = this.openText;
          opened.push(this.mark(event, { type: 'TEXT_MESSAGE_START', messageId: this.openText, role: 'assistant' }));
        }
        return [...opened, this.mark(event, { type: 'TEXT_MESSAGE_CONTENT', messageId: this.openText, delta: event.content })];
      }
      case 'tool_call': {
        if (event.client) this.pendingCalls.push(event.tool_call_id);
        const call = { toolCallId: event.tool_call_id };
        return [
          ...this.closeText(event),
          this.mark(event, { type: 'TOOL_CALL_START', ...call, toolCallName: event.tool_name, ...(this.turnMessage ? { parentMessageId: this.turnMessage } : {}) }),
          this.mark(event, { type: 'TOOL_CALL_ARGS', ...call, delta: JSON.stringify(event.tool_args ?? {}) }),
          this.mark(event, { type: 'TOOL_CALL_END', ...call }),
        ];
      }
      case 'tool_result':
        // The model's next turn reads the results: its text is a new message.
        this.turnMessage = undefined;
        return [
          ...this.closeText(event),
          {
            type: 'TOOL_CALL_RESULT',
            messageId: `${event.run_id}:result:${event.tool_call_id}`,
            toolCallId: event.tool_call_id,
            content: typeof event.result === 'string' ? event.result : JSON.stringify(event.result ?? null),
            role: 'tool',
            timestamp: Date.parse(event.timestamp),
            metadata: { dataagent: { run_id: event.run_id, seq: event.seq }, status: event.status },
          },
        ];
      case 'hitl_request':
        return [...this.closeText(event), this.finished(event, { type: 'interrupt', interrupts: [interruptOf(event)] })];
      case 'error':
        // A recoverable error is news, not the end (a CUSTOM event a page may show); a fatal one fails the AG-UI run.
        return event.recoverable
          ? [this.mark(event, { type: 'CUSTOM', name: 'dataagent.notice', value: { error_code: event.error_code ?? null, message: event.error } })]
          : [...this.closeText(event), this.mark(event, { type: 'RUN_ERROR', message: event.error, code: event.error_code ?? 'run_failed' })];
      case 'done':
        return [...this.closeText(event), this.finished(event, this.outcomeOf(event), event)];
      default:
        return [];
    }
  }

  private outcomeOf(done: DoneEventDict): AgUiRunOutcome {
    if (done.cancelled) return { type: 'cancelled' };
    return this.pendingCalls.length > 0 && done.reason === 'tool_calls' ? { type: 'success', pendingToolCallIds: [...this.pendingCalls] } : { type: 'success' };
  }

  private finished(event: EventDict, outcome: AgUiRunOutcome, done?: DoneEventDict): AgUiEvent {
    const usage = done?.usage ? [{ inputTokens: done.usage.input_tokens, outputTokens: done.usage.output_tokens, totalTokens: done.usage.input_tokens + done.usage.output_tokens }] : undefined;
    return this.mark(event, { type: 'RUN_FINISHED', threadId: this.threadId, runId: this.runId, outcome, ...(usage ? { usage } : {}) });
  }

  private closeText(event: EventDict): AgUiEvent[] {
    if (!this.openText) return [];
    const messageId = this.openText;
    this.openText = undefined;
    return [this.mark(event, { type: 'TEXT_MESSAGE_END', messageId })];
  }

  private mark(event: EventDict, body: AgUiEventBody): AgUiEvent {
    return { ...body, timestamp: Date.parse(event.timestamp), metadata: { dataagent: { run_id: event.run_id, seq: event.seq } } } as AgUiEvent;
  }
}

/**
 * An approval as an AG-UI interrupt: its id is the HITL request's, its answer a resume entry
 * (`status: "resolved"`, `payload: {approved: boolean, message?}`; `"cancelled"` rejects).
 */
function interruptOf(event: HitlRequestEventDict): AgUiInterrupt {
  const { name, args } = event.action_request as { name?: string; args?: unknown };
  return {
    id: event.request_id,
    reason: 'tool_approval',
    message: `Approve the call of \`${name ?? 'a tool'}\`?`,
    toolCallId: toolCallOfRequest(event.request_id),
    responseSchema: { type: 'object', properties: { approved: { type: 'boolean' }, message: { type: 'string' } }, required: ['approved'] },
    ...(event.expires_at ? { expiresAt: event.expires_at } : {}),
    metadata: { dataagent: { run_id: event.run_id, seq: event.seq, tool: name ?? null, args: args ?? null, allowed_decisions: event.allowed_decisions } },
  };
}
