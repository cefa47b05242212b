/**
 * The one event vocabulary of DataAgent. The dict form (snake_case) is the wire form
 * everywhere: Socket.IO, raw WebSocket, SSE, REST, Redis and MySQL.
 */
export const EVENT_TYPES = [
  'run_queued',
  'run_started',
  'text',
  'tool_call',
  'tool_result',
  'hitl_request',
  'todo_update',
  'file_operation',
  'error',
  'done',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** The highest seq a run can reach (the archive's unsigned int column); resume positions above it are invalid. */
export const MAX_SEQ = 4_294_967_295;

/** The JSON form of an event. Every event carries the envelope fields. */
export interface EventDict {
  event_type: EventType;
  timestamp: string;
  session_id: string;
  run_id: string;
  seq: number;
  [field: string]: unknown;
}

export interface EventEnvelope {
  sessionId: string;
  runId: string;
  /** Assigned by the run's event log; 0 until then. */
  seq?: number;
  timestamp?: string;
}

export abstract class ExecutionEvent {
  abstract readonly eventType: EventType;
  sessionId: string;
  runId: string;
  seq: number;
  timestamp: string;

  protected constructor(envelope: EventEnvelope) {
    this.sessionId = envelope.sessionId;
    this.runId = envelope.runId;
    this.seq = envelope.seq ?? 0;
    this.timestamp = envelope.timestamp ?? new Date().toISOString();
  }

  /** Event-specific fields, snake_case, without the envelope. */
  protected abstract payload(): Record<string, unknown>;

  toDict(): EventDict {
    return {
      event_type: this.eventType,
      timestamp: this.timestamp,
      session_id: this.sessionId,
      run_id: this.runId,
      seq: this.seq,
      ...this.payload(),
    };
  }

  /**
   * Rebuilds an event from its dict form.
   * @throws InvalidEventError when the type is unknown or a required field is missing.
   */
  static fromDict(dict: Record<string, unknown>): ExecutionEvent {
    const type = dict.event_type;
    const build = typeof type === 'string' ? builders[type as EventType] : undefined;
    if (!build) throw new InvalidEventError(`unknown event_type: ${String(type)}`);
    for (const field of ['session_id', 'run_id'] as const) {
      if (typeof dict[field] !== 'string') throw new InvalidEventError(`${String(type)} event without ${field}`);
    }
    const envelope: EventEnvelope = {
      sessionId: dict.session_id as string,
      runId: dict.run_id as string,
      seq: typeof dict.seq === 'number' ? dict.seq : 0,
      timestamp: typeof dict.timestamp === 'string' ? dict.timestamp : undefined,
    };
    return build(envelope, dict);
  }
}

export class InvalidEventError extends Error {}

export class RunQueuedEvent extends ExecutionEvent {
  readonly eventType = 'run_queued';
  constructor(envelope: EventEnvelope) {
    super(envelope);
  }
  protected payload() {
    return {};
  }
}

export class RunStartedEvent extends ExecutionEvent {
  readonly eventType = 'run_started';
  constructor(envelope: EventEnvelope, readonly workerId = '') {
    super(envelope);
  }
  protected payload() {
    return { worker_id: this.workerId };
  }
}

export class TextEvent extends ExecutionEvent {
  readonly eventType = 'text';
  constructor(envelope: EventEnvelope, readonly content: string, readonly isFinal = false) {
    super(envelope);
  }
  protected payload() {
    return { content: this.content, is_final: this.isFinal };
  }
}

export class ToolCallEvent extends ExecutionEvent {
  readonly eventType = 'tool_call';
  constructor(
    envelope: EventEnvelope,
    readonly toolName: string,
    readonly toolArgs: Record<string, unknown>,
    readonly toolCallId: string,
  ) {
    super(envelope);
  }
  protected payload() {
    return { tool_name: this.toolName, tool_args: this.toolArgs, tool_call_id: this.toolCallId };
  }
}

/** `interrupted`: the worker running the call died before its result was recorded; whether it took effect is unknown. */
export type ToolResultStatus = 'success' | 'error' | 'timeout' | 'rejected' | 'cancelled' | 'interrupted';

export class ToolResultEvent extends ExecutionEvent {
  readonly eventType = 'tool_result';
  constructor(
    envelope: EventEnvelope,
    readonly toolCallId: string,
    readonly result: unknown,
    readonly status: ToolResultStatus,
    /** The tool's own result in full, for clients (an MCP tool's content blocks, images included); the model saw `result`. */
    readonly content?: unknown,
  ) {
    super(envelope);
  }
  protected payload() {
    return { tool_call_id: this.toolCallId, result: this.result, status: this.status, ...(this.content !== undefined ? { content: this.content } : {}) };
  }
}

export interface ActionRequest {
  name: string;
  args: Record<string, unknown>;
  description?: string;
}

export class HitlRequestEvent extends ExecutionEvent {
  readonly eventType = 'hitl_request';
  constructor(
    envelope: EventEnvelope,
    readonly requestId: string,
    readonly actionRequest: ActionRequest,
    readonly allowedDecisions: string[] = ['approve', 'reject', 'approve_all'],
    readonly expiresAt?: string,
  ) {
    super(envelope);
  }
  protected payload() {
    return {
      request_id: this.requestId,
      action_request: this.actionRequest,
      allowed_decisions: this.allowedDecisions,
      ...(this.expiresAt ? { expires_at: this.expiresAt } : {}),
    };
  }
}

export interface TodoItem {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
}

export class TodoUpdateEvent extends ExecutionEvent {
  readonly eventType = 'todo_update';
  constructor(envelope: EventEnvelope, readonly todos: TodoItem[]) {
    super(envelope);
  }
  protected payload() {
    return { todos: this.todos };
  }
}

export interface FileOpStats {
  additions: number;
  deletions: number;
}

export class FileOperationEvent extends ExecutionEvent {
  readonly eventType = 'file_operation';
  constructor(
    envelope: EventEnvelope,
    readonly operation: string,
    readonly path: string,
    readonly diff: string,
    readonly stats: FileOpStats,
  ) {
    super(envelope);
  }
  protected payload() {
    return { operation: this.operation, path: this.path, diff: this.diff, stats: this.stats };
  }
}

export class ErrorEvent extends ExecutionEvent {
  readonly eventType = 'error';
  /**
   * @param resumeAfterSeq with `worker_lost`: the run continues from its state after this seq;
   *   the events between it and this error belong to a step that is redone, and clients drop them.
   * @param retryAfterSeconds with a busy LLM (`llm_rate_limited`, `llm_overloaded`): how long its
   *   provider asked to wait before the message is sent again.
   */
  constructor(
    envelope: EventEnvelope,
    readonly error: string,
    readonly recoverable = false,
    readonly errorCode?: string,
    readonly resumeAfterSeq?: number,
    readonly retryAfterSeconds?: number,
  ) {
    super(envelope);
  }
  protected payload() {
    return {
      error: this.error,
      recoverable: this.recoverable,
      ...(this.errorCode ? { error_code: this.errorCode } : {}),
      ...(this.resumeAfterSeq === undefined ? {} : { resume_after_seq: this.resumeAfterSeq }),
      ...(this.retryAfterSeconds === undefined ? {} : { retry_after: this.retryAfterSeconds }),
    };
  }
}

export class DoneEvent extends ExecutionEvent {
  readonly eventType = 'done';
  constructor(envelope: EventEnvelope, readonly cancelled = false, readonly reason?: string) {
    super(envelope);
  }
  protected payload() {
    return { cancelled: this.cancelled, ...(this.reason ? { reason: this.reason } : {}) };
  }
}

type Builder = (envelope: EventEnvelope, d: Record<string, unknown>) => ExecutionEvent;

const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback);
const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

const builders: Record<EventType, Builder> = {
  run_queued: (e) => new RunQueuedEvent(e),
  run_started: (e, d) => new RunStartedEvent(e, str(d.worker_id)),
  text: (e, d) => new TextEvent(e, str(d.content), d.is_final === true),
  tool_call: (e, d) => new ToolCallEvent(e, str(d.tool_name), obj(d.tool_args), str(d.tool_call_id)),
  tool_result: (e, d) => new ToolResultEvent(e, str(d.tool_call_id), d.result, str(d.status, 'success') as ToolResultStatus, d.content),
  hitl_request: (e, d) =>
    new HitlRequestEvent(
      e,
      str(d.request_id),
      obj(d.action_request) as unknown as ActionRequest,
      Array.isArray(d.allowed_decisions) ? (d.allowed_decisions as string[]) : undefined,
      typeof d.expires_at === 'string' ? d.expires_at : undefined,
    ),
  todo_update: (e, d) => new TodoUpdateEvent(e, Array.isArray(d.todos) ? (d.todos as TodoItem[]) : []),
  file_operation: (e, d) =>
    new FileOperationEvent(e, str(d.operation), str(d.path), str(d.diff), obj(d.stats) as unknown as FileOpStats),
  error: (e, d) =>
    new ErrorEvent(
      e,
      str(d.error),
      d.recoverable === true,
      typeof d.error_code === 'string' ? d.error_code : undefined,
      typeof d.resume_after_seq === 'number' ? d.resume_after_seq : undefined,
      typeof d.retry_after === 'number' ? d.retry_after : undefined,
    ),
  done: (e, d) => new DoneEvent(e, d.cancelled === true, typeof d.reason === 'string' ? d.reason : undefined),
};

/** Events that end a run's stream. */
export function isTerminal(event: Pick<EventDict, 'event_type'>): boolean {
  return event.event_type === 'done';
}
