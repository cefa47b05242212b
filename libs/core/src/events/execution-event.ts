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
  'elicitation_request',
  'elicitation',
  'todo_update',
  'file_operation',
  'usage',
  'error',
  'done',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** The highest seq a run can reach (the archive's unsigned int column); resume positions above it are invalid. */
export const MAX_SEQ = 4_294_967_295;

/** The fields every event's JSON form carries, in this order, before its own. */
export interface EventDictBase<T extends EventType = EventType> {
  event_type: T;
  timestamp: string;
  session_id: string;
  run_id: string;
  seq: number;
}

/** `run_queued`: the gateway accepted the message and queued the run. */
export type RunQueuedEventDict = EventDictBase<'run_queued'>;

/** `run_started`: a worker took the run. */
export interface RunStartedEventDict extends EventDictBase<'run_started'> {
  worker_id: string;
}

/** `text`: a piece of the answer; `is_final` marks the run's last piece (often empty). */
export interface TextEventDict extends EventDictBase<'text'> {
  content: string;
  is_final: boolean;
}

/**
 * `client: true`: a call to one of the run's client's own tools (the OpenAI-compatible door's
 * `tools`). Nothing in DataAgent runs it and no `tool_result` follows: the run ends with
 * `done{reason: 'tool_calls'}`, and the client's next request carries the result.
 */
export interface ToolCallEventDict extends EventDictBase<'tool_call'> {
  tool_name: string;
  tool_args: Record<string, unknown>;
  tool_call_id: string;
  client?: true;
}

/** `content`, when present: the tool's own result in full, for clients; the model saw `result`. */
export interface ToolResultEventDict extends EventDictBase<'tool_result'> {
  tool_call_id: string;
  result: unknown;
  status: ToolResultStatus;
  content?: unknown;
}

export interface HitlRequestEventDict extends EventDictBase<'hitl_request'> {
  request_id: string;
  action_request: ActionRequest;
  allowed_decisions: string[];
  expires_at?: string;
}

/** How a server asks: a form built from a flat JSON schema, or a URL the person opens themselves. */
export type ElicitationMode = 'form' | 'url';

/** A person's answer to an elicitation: `accept` (with the form's content), `decline`, or `cancel` (dismissed). */
export type ElicitationAction = 'accept' | 'decline' | 'cancel';

export const ELICITATION_ACTIONS: readonly ElicitationAction[] = ['accept', 'decline', 'cancel'];

/** Why an elicitation ended without the person's answer: it expired, or the call it belongs to ended (cancel, a withdrawn request). */
export type ElicitationEndReason = 'expired' | 'cancelled';

/**
 * `elicitation_request`: an MCP server asks the person something during a tool call. A form
 * (`requested_schema`, a flat object schema) or a URL to open; answered by `request_id` before
 * `expires_at`, or it counts as `cancel`.
 */
export interface ElicitationRequestEventDict extends EventDictBase<'elicitation_request'> {
  request_id: string;
  tool_call_id: string;
  /** The MCP server that asks. */
  server: string;
  mode: ElicitationMode;
  message: string;
  requested_schema?: Record<string, unknown>;
  url?: string;
  allowed_actions: ElicitationAction[];
  expires_at: string;
}

/** `elicitation`: how an elicitation ended; `content` is what the server got (defaults filled in), `reason` says why nobody answered. */
export interface ElicitationEventDict extends EventDictBase<'elicitation'> {
  request_id: string;
  action: ElicitationAction;
  content?: Record<string, unknown>;
  reason?: ElicitationEndReason;
}

export interface TodoUpdateEventDict extends EventDictBase<'todo_update'> {
  todos: TodoItem[];
}

export interface FileOperationEventDict extends EventDictBase<'file_operation'> {
  operation: string;
  path: string;
  diff: string;
  stats: FileOpStats;
}

/**
 * `resume_after_seq` comes with `worker_lost`: the events after it belong to a step that is
 * redone. `retry_after` (seconds) comes with a busy LLM (`llm_rate_limited`, `llm_overloaded`).
 */
export interface ErrorEventDict extends EventDictBase<'error'> {
  error: string;
  recoverable: boolean;
  error_code?: string;
  resume_after_seq?: number;
  retry_after?: number;
  /** The MCP server a recoverable error is about (`mcp_sign_in_required`). */
  mcp_server?: string;
}

/**
 * Tokens a run's model calls used, summed over the run, as the providers counted them;
 * `estimated`: at least one call came back without a count and was estimated (about four
 * characters a token).
 */
export interface RunUsage {
  input_tokens: number;
  output_tokens: number;
  /** Of the input, what the provider read from its prompt cache; absent when none. */
  cached_input_tokens?: number;
  estimated?: true;
  /** What the run's calls cost (the sum of their `usage` facts, exact), in `currency`; absent when no call was priced. */
  cost?: string;
  currency?: string;
}

/**
 * `usage`: one model call's tokens and what they cost, a fact of the run's log. It is counted
 * once by (run, seq) wherever usage is summed, so a run continued by another worker counts each
 * call it made once. `input_tokens` includes `cached_input_tokens`. `estimated`: the provider
 * reported no usage, and the figures come from the model family's tokenizer. `cost`: a decimal
 * of 12 places in `currency`, from the price table when the call was made; `priced: false`
 * when the table had no price for the model (the cost is then 0).
 */
export interface UsageEventDict extends EventDictBase<'usage'> {
  model: string;
  call: number;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  estimated?: true;
  cost: string;
  currency: string;
  priced?: false;
}

/**
 * `reason`, when the run did not simply answer: `cancelled`, `rejected`, `max_iterations`,
 * `tool_call_limit`, `budget` (a budget was spent: an `error` with `budget_exhausted` says which), or
 * `tool_calls` (it stopped at calls to its client's tools). `usage`: what
 * the run's model calls cost, on a done its worker wrote.
 */
export interface DoneEventDict extends EventDictBase<'done'> {
  cancelled: boolean;
  reason?: string;
  usage?: RunUsage;
}

/**
 * The JSON form of an event, discriminated by `event_type`: narrow on it to read the type's own
 * fields. JSON read back from Redis, MySQL or a socket is trusted to be one of these (we wrote it).
 */
export type EventDict =
  | RunQueuedEventDict
  | RunStartedEventDict
  | TextEventDict
  | ToolCallEventDict
  | ToolResultEventDict
  | HitlRequestEventDict
  | ElicitationRequestEventDict
  | ElicitationEventDict
  | TodoUpdateEventDict
  | FileOperationEventDict
  | UsageEventDict
  | ErrorEventDict
  | DoneEventDict;

/** The JSON form of one event type: `EventDictOf<'text'>` is {@link TextEventDict}. */
export type EventDictOf<T extends EventType> = Extract<EventDict, { event_type: T }>;

/** An event type's own fields, without the envelope. */
type Payload<D extends EventDict> = Omit<D, keyof EventDictBase>;

export interface EventEnvelope {
  sessionId: string;
  runId: string;
  /** Assigned by the run's event log; 0 until then. */
  seq?: number;
  timestamp?: string;
}

export abstract class ExecutionEvent<D extends EventDict = EventDict> {
  abstract readonly eventType: D['event_type'];
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
  protected abstract payload(): Payload<D>;

  /** The wire form: the envelope fields first, then the type's own (key order is part of the wire form). */
  toDict(): D {
    const envelope: EventDictBase<D['event_type']> = {
      event_type: this.eventType,
      timestamp: this.timestamp,
      session_id: this.sessionId,
      run_id: this.runId,
      seq: this.seq,
    };
    // Each subclass's payload() is checked against its dict type; TypeScript cannot see that the
    // spread of a generic Omit plus the envelope rebuilds D.
    return { ...envelope, ...this.payload() } as D;
  }

  /**
   * Rebuilds an event from its dict form.
   * @throws InvalidEventError when the type is unknown or a required field is missing.
   */
  static fromDict<T extends EventType>(dict: EventDictOf<T>): EventOf<T>;
  static fromDict(dict: Record<string, unknown>): AnyExecutionEvent;
  static fromDict(event: EventDict | Record<string, unknown>): AnyExecutionEvent {
    const dict = event as Record<string, unknown>;
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

export class RunQueuedEvent extends ExecutionEvent<RunQueuedEventDict> {
  readonly eventType = 'run_queued';
  constructor(envelope: EventEnvelope) {
    super(envelope);
  }
  protected payload(): Payload<RunQueuedEventDict> {
    return {};
  }
}

export class RunStartedEvent extends ExecutionEvent<RunStartedEventDict> {
  readonly eventType = 'run_started';
  constructor(envelope: EventEnvelope, readonly workerId = '') {
    super(envelope);
  }
  protected payload(): Payload<RunStartedEventDict> {
    return { worker_id: this.workerId };
  }
}

export class TextEvent extends ExecutionEvent<TextEventDict> {
  readonly eventType = 'text';
  constructor(envelope: EventEnvelope, readonly content: string, readonly isFinal = false) {
    super(envelope);
  }
  protected payload(): Payload<TextEventDict> {
    return { content: this.content, is_final: this.isFinal };
  }
}

export class ToolCallEvent extends ExecutionEvent<ToolCallEventDict> {
  readonly eventType = 'tool_call';
  constructor(
    envelope: EventEnvelope,
    readonly toolName: string,
    readonly toolArgs: Record<string, unknown>,
    readonly toolCallId: string,
    /** A call to a tool of the run's client: not run here (see {@link ToolCallEventDict}). */
    readonly client = false,
  ) {
    super(envelope);
  }
  protected payload(): Payload<ToolCallEventDict> {
    return { tool_name: this.toolName, tool_args: this.toolArgs, tool_call_id: this.toolCallId, ...(this.client ? { client: true as const } : {}) };
  }
}

/** `interrupted`: the worker running the call died before its result was recorded; whether it took effect is unknown. */
export const TOOL_RESULT_STATUSES = ['success', 'error', 'timeout', 'rejected', 'cancelled', 'interrupted'] as const;

export type ToolResultStatus = (typeof TOOL_RESULT_STATUSES)[number];

export class ToolResultEvent extends ExecutionEvent<ToolResultEventDict> {
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
  protected payload(): Payload<ToolResultEventDict> {
    return { tool_call_id: this.toolCallId, result: this.result, status: this.status, ...(this.content !== undefined ? { content: this.content } : {}) };
  }
}

export interface ActionRequest {
  name: string;
  args: Record<string, unknown>;
  description?: string;
}

export class HitlRequestEvent extends ExecutionEvent<HitlRequestEventDict> {
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
  protected payload(): Payload<HitlRequestEventDict> {
    return {
      request_id: this.requestId,
      action_request: this.actionRequest,
      allowed_decisions: this.allowedDecisions,
      ...(this.expiresAt ? { expires_at: this.expiresAt } : {}),
    };
  }
}

/** What an `elicitation_request` says: the server's question, as a form or a URL. */
export interface ElicitationPrompt {
  server: string;
  mode: ElicitationMode;
  message: string;
  requestedSchema?: Record<string, unknown>;
  url?: string;
}

export class ElicitationRequestEvent extends ExecutionEvent<ElicitationRequestEventDict> {
  readonly eventType = 'elicitation_request';
  constructor(
    envelope: EventEnvelope,
    readonly requestId: string,
    readonly toolCallId: string,
    readonly prompt: ElicitationPrompt,
    readonly expiresAt: string,
  ) {
    super(envelope);
  }
  protected payload(): Payload<ElicitationRequestEventDict> {
    const { server, mode, message, requestedSchema, url } = this.prompt;
    return {
      request_id: this.requestId,
      tool_call_id: this.toolCallId,
      server,
      mode,
      message,
      ...(requestedSchema ? { requested_schema: requestedSchema } : {}),
      ...(url ? { url } : {}),
      allowed_actions: [...ELICITATION_ACTIONS],
      expires_at: this.expiresAt,
    };
  }
}

export class ElicitationEvent extends ExecutionEvent<ElicitationEventDict> {
  readonly eventType = 'elicitation';
  constructor(
    envelope: EventEnvelope,
    readonly requestId: string,
    readonly action: ElicitationAction,
    readonly content?: Record<string, unknown>,
    readonly reason?: ElicitationEndReason,
  ) {
    super(envelope);
  }
  protected payload(): Payload<ElicitationEventDict> {
    return { request_id: this.requestId, action: this.action, ...(this.content ? { content: this.content } : {}), ...(this.reason ? { reason: this.reason } : {}) };
  }
}

export interface TodoItem {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
}

export class TodoUpdateEvent extends ExecutionEvent<TodoUpdateEventDict> {
  readonly eventType = 'todo_update';
  constructor(envelope: EventEnvelope, readonly todos: TodoItem[]) {
    super(envelope);
  }
  protected payload(): Payload<TodoUpdateEventDict> {
    return { todos: this.todos };
  }
}

export interface FileOpStats {
  additions: number;
  deletions: number;
}

export class FileOperationEvent extends ExecutionEvent<FileOperationEventDict> {
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
  protected payload(): Payload<FileOperationEventDict> {
    return { operation: this.operation, path: this.path, diff: this.diff, stats: this.stats };
  }
}

/** One model call's usage; see {@link UsageEventDict}. */
export interface CallUsage {
  model: string;
  call: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  estimated: boolean;
  cost: string;
  currency: string;
  priced: boolean;
}

export class UsageEvent extends ExecutionEvent<UsageEventDict> {
  readonly eventType = 'usage';
  constructor(envelope: EventEnvelope, readonly usage: CallUsage) {
    super(envelope);
  }
  protected payload(): Payload<UsageEventDict> {
    const u = this.usage;
    return {
      model: u.model,
      call: u.call,
      input_tokens: u.inputTokens,
      output_tokens: u.outputTokens,
      cached_input_tokens: u.cachedInputTokens,
      ...(u.estimated ? { estimated: true as const } : {}),
      cost: u.cost,
      currency: u.currency,
      ...(u.priced ? {} : { priced: false as const }),
    };
  }
}

export class ErrorEvent extends ExecutionEvent<ErrorEventDict> {
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
    readonly mcpServer?: string,
  ) {
    super(envelope);
  }
  protected payload(): Payload<ErrorEventDict> {
    return {
      error: this.error,
      recoverable: this.recoverable,
      ...(this.errorCode ? { error_code: this.errorCode } : {}),
      ...(this.resumeAfterSeq === undefined ? {} : { resume_after_seq: this.resumeAfterSeq }),
      ...(this.retryAfterSeconds === undefined ? {} : { retry_after: this.retryAfterSeconds }),
      ...(this.mcpServer === undefined ? {} : { mcp_server: this.mcpServer }),
    };
  }
}

export class DoneEvent extends ExecutionEvent<DoneEventDict> {
  readonly eventType = 'done';
  constructor(envelope: EventEnvelope, readonly cancelled = false, readonly reason?: string, readonly usage?: RunUsage) {
    super(envelope);
  }
  protected payload(): Payload<DoneEventDict> {
    return { cancelled: this.cancelled, ...(this.reason ? { reason: this.reason } : {}), ...(this.usage ? { usage: this.usage } : {}) };
  }
}

/** The class of each event type: `EventOf<'text'>` is {@link TextEvent}. */
export interface EventClasses {
  run_queued: RunQueuedEvent;
  run_started: RunStartedEvent;
  text: TextEvent;
  tool_call: ToolCallEvent;
  tool_result: ToolResultEvent;
  hitl_request: HitlRequestEvent;
  elicitation_request: ElicitationRequestEvent;
  elicitation: ElicitationEvent;
  todo_update: TodoUpdateEvent;
  file_operation: FileOperationEvent;
  usage: UsageEvent;
  error: ErrorEvent;
  done: DoneEvent;
}

export type EventOf<T extends EventType> = EventClasses[T];

/** Any event object, narrowed by `eventType` as {@link EventDict} is by `event_type`. */
export type AnyExecutionEvent = EventClasses[EventType];

type Builder = (envelope: EventEnvelope, d: Record<string, unknown>) => AnyExecutionEvent;

const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

const builders: Record<EventType, Builder> = {
  run_queued: (e) => new RunQueuedEvent(e),
  run_started: (e, d) => new RunStartedEvent(e, str(d.worker_id)),
  text: (e, d) => new TextEvent(e, str(d.content), d.is_final === true),
  tool_call: (e, d) => new ToolCallEvent(e, str(d.tool_name), obj(d.tool_args), str(d.tool_call_id), d.client === true),
  tool_result: (e, d) => new ToolResultEvent(e, str(d.tool_call_id), d.result, str(d.status, 'success') as ToolResultStatus, d.content),
  hitl_request: (e, d) =>
    new HitlRequestEvent(
      e,
      str(d.request_id),
      obj(d.action_request) as unknown as ActionRequest,
      Array.isArray(d.allowed_decisions) ? (d.allowed_decisions as string[]) : undefined,
      typeof d.expires_at === 'string' ? d.expires_at : undefined,
    ),
  elicitation_request: (e, d) =>
    new ElicitationRequestEvent(
      e,
      str(d.request_id),
      str(d.tool_call_id),
      {
        server: str(d.server),
        mode: d.mode === 'url' ? 'url' : 'form',
        message: str(d.message),
        ...(d.requested_schema && typeof d.requested_schema === 'object' ? { requestedSchema: obj(d.requested_schema) } : {}),
        ...(typeof d.url === 'string' ? { url: d.url } : {}),
      },
      str(d.expires_at),
    ),
  elicitation: (e, d) =>
    new ElicitationEvent(
      e,
      str(d.request_id),
      (ELICITATION_ACTIONS as readonly string[]).includes(str(d.action)) ? (d.action as ElicitationAction) : 'cancel',
      d.content && typeof d.content === 'object' ? obj(d.content) : undefined,
      d.reason === 'expired' || d.reason === 'cancelled' ? d.reason : undefined,
    ),
  todo_update: (e, d) => new TodoUpdateEvent(e, Array.isArray(d.todos) ? (d.todos as TodoItem[]) : []),
  file_operation: (e, d) =>
    new FileOperationEvent(e, str(d.operation), str(d.path), str(d.diff), obj(d.stats) as unknown as FileOpStats),
  usage: (e, d) =>
    new UsageEvent(e, {
      model: str(d.model),
      call: num(d.call),
      inputTokens: num(d.input_tokens),
      outputTokens: num(d.output_tokens),
      cachedInputTokens: num(d.cached_input_tokens),
      estimated: d.estimated === true,
      cost: str(d.cost, '0'),
      currency: str(d.currency),
      priced: d.priced !== false,
    }),
  error: (e, d) =>
    new ErrorEvent(
      e,
      str(d.error),
      d.recoverable === true,
      typeof d.error_code === 'string' ? d.error_code : undefined,
      typeof d.resume_after_seq === 'number' ? d.resume_after_seq : undefined,
      typeof d.retry_after === 'number' ? d.retry_after : undefined,
    ),
  done: (e, d) => new DoneEvent(e, d.cancelled === true, typeof d.reason === 'string' ? d.reason : undefined, usageOf(d.usage)),
};

function usageOf(v: unknown): RunUsage | undefined {
  const u = obj(v);
  if (typeof u.input_tokens !== 'number' || typeof u.output_tokens !== 'number') return undefined;
  return {
    input_tokens: u.input_tokens,
    output_tokens: u.output_tokens,
    ...(typeof u.cached_input_tokens === 'number' ? { cached_input_tokens: u.cached_input_tokens } : {}),
    ...(u.estimated === true ? { estimated: true as const } : {}),
    ...(typeof u.cost === 'string' && typeof u.currency === 'string' ? { cost: u.cost, currency: u.currency } : {}),
  };
}

/**
 * Whether `event` is of `type`, narrowing it to that type's dict where a generic type or a
 * callback keeps `event.event_type === type` from narrowing by itself.
 */
export function isEventOf<T extends EventType>(event: EventDict, type: T): event is EventDictOf<T> {
  return event.event_type === type;
}

/** Events that end a run's stream. */
export function isTerminal(event: Pick<EventDict, 'event_type'>): boolean {
  return event.event_type === 'done';
}
