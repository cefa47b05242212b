import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import {
  TOOL_RESULT_STATUSES,
  type ActionRequest,
  type DoneEventDict,
  type ElicitationAction,
  type ElicitationEndReason,
  type ElicitationEventDict,
  type ElicitationMode,
  type ElicitationRequestEventDict,
  type ErrorEventDict,
  type RunUsage,
  type FileOperationEventDict,
  type FileOpStats,
  type HitlRequestEventDict,
  type RunQueuedEventDict,
  type RunStartedEventDict,
  type TextEventDict,
  type TodoItem,
  type TodoUpdateEventDict,
  type UsageEventDict,
  type ToolCallEventDict,
  type ToolResultEventDict,
  type ToolResultStatus,
} from '#core/events/execution-event.js';
import { ANY_JSON } from '../../../common/json-schemas.js';

/*
 * The run events of execution-event.ts as the OpenAPI document shows them, one class per
 * `event_type`. Each class implements its event's dict type, so a field added to an event and
 * not here fails the build.
 */

/** The fields every event carries first. */
abstract class RunEventEnvelope {
  @ApiProperty({ format: 'date-time' })
  timestamp: string;

  @ApiProperty()
  session_id: string;

  @ApiProperty()
  run_id: string;

  @ApiProperty({ type: 'integer', description: "The event's position in its run, from 1; 0 for a gateway's own event on a stream (not stored)" })
  seq: number;
}

export class RunQueuedEventView extends RunEventEnvelope implements RunQueuedEventDict {
  @ApiProperty({ enum: ['run_queued'] })
  event_type: 'run_queued';
}

export class RunStartedEventView extends RunEventEnvelope implements RunStartedEventDict {
  @ApiProperty({ enum: ['run_started'] })
  event_type: 'run_started';

  @ApiProperty()
  worker_id: string;
}

export class TextEventView extends RunEventEnvelope implements TextEventDict {
  @ApiProperty({ enum: ['text'] })
  event_type: 'text';

  @ApiProperty({ description: 'A piece of the answer' })
  content: string;

  @ApiProperty({ description: "The run's last piece (often empty)" })
  is_final: boolean;
}

export class ToolCallEventView extends RunEventEnvelope implements ToolCallEventDict {
  @ApiProperty({ enum: ['tool_call'] })
  event_type: 'tool_call';

  @ApiProperty({ description: 'A built-in tool, or `server.tool` of an MCP server' })
  tool_name: string;

  @ApiProperty({ type: 'object', additionalProperties: true })
  tool_args: Record<string, unknown>;

  @ApiProperty()
  tool_call_id: string;

  @ApiPropertyOptional({ enum: [true], description: "A call of a tool the client sent (OpenAI-compatible door): the client runs it, the run ends at it" })
  client?: true;
}

export class ToolResultEventView extends RunEventEnvelope implements ToolResultEventDict {
  @ApiProperty({ enum: ['tool_result'] })
  event_type: 'tool_result';

  @ApiProperty()
  tool_call_id: string;

  @ApiProperty({ ...ANY_JSON, description: 'What the model saw' })
  result: unknown;

  @ApiProperty({ enum: TOOL_RESULT_STATUSES })
  status: ToolResultStatus;

  @ApiPropertyOptional({ ...ANY_JSON, description: "The tool's own result in full, for clients, when it differs from `result`" })
  content?: unknown;
}

class ActionRequestView implements ActionRequest {
  @ApiProperty({ description: 'The tool that asks for approval' })
  name: string;

  @ApiProperty({ type: 'object', additionalProperties: true })
  args: Record<string, unknown>;

  @ApiPropertyOptional()
  description?: string;
}

export class HitlRequestEventView extends RunEventEnvelope implements HitlRequestEventDict {
  @ApiProperty({ enum: ['hitl_request'] })
  event_type: 'hitl_request';

  @ApiProperty({ description: 'Answer it with POST /api/v1/hitl/{request_id}' })
  request_id: string;

  @ApiProperty({ type: ActionRequestView })
  action_request: ActionRequestView;

  @ApiProperty({ type: [String], example: ['approve', 'reject', 'approve_all'] })
  allowed_decisions: string[];

  @ApiPropertyOptional({ format: 'date-time' })
  expires_at?: string;
}

class TodoItemView implements TodoItem {
  @ApiProperty()
  content: string;

  @ApiProperty({ enum: ['pending', 'in_progress', 'completed'] })
  status: 'pending' | 'in_progress' | 'completed';
}

export class TodoUpdateEventView extends RunEventEnvelope implements TodoUpdateEventDict {
  @ApiProperty({ enum: ['todo_update'] })
  event_type: 'todo_update';

  @ApiProperty({ type: [TodoItemView] })
  todos: TodoItemView[];
}

class FileOpStatsView implements FileOpStats {
  @ApiProperty({ type: 'integer' })
  additions: number;

  @ApiProperty({ type: 'integer' })
  deletions: number;
}

export class FileOperationEventView extends RunEventEnvelope implements FileOperationEventDict {
  @ApiProperty({ enum: ['file_operation'] })
  event_type: 'file_operation';

  @ApiProperty({ example: 'write' })
  operation: string;

  @ApiProperty({ description: 'In the workspace' })
  path: string;

  @ApiProperty({ description: 'A unified diff' })
  diff: string;

  @ApiProperty({ type: FileOpStatsView })
  stats: FileOpStatsView;
}

export class ErrorEventView extends RunEventEnvelope implements ErrorEventDict {
  @ApiProperty({ enum: ['error'] })
  event_type: 'error';

  @ApiProperty({ description: 'What went wrong, for a person' })
  error: string;

  @ApiProperty({ description: 'The run goes on (a retried model call, a refused tool); false ends it' })
  recoverable: boolean;

  @ApiPropertyOptional({ example: 'llm_rate_limited' })
  error_code?: string;

  @ApiPropertyOptional({ type: 'integer', description: 'With `worker_lost`: the events after this seq belong to a step that is redone' })
  resume_after_seq?: number;

  @ApiPropertyOptional({ description: 'Seconds, with a busy model (`llm_rate_limited`, `llm_overloaded`)' })
  retry_after?: number;

  @ApiPropertyOptional({ description: 'With `mcp_sign_in_required`: the MCP server whose tools wait for the person to sign in' })
  mcp_server?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: "A gateway's own error on a stream (`slow_consumer`, `stream_failed`): its specifics" })
  details?: Record<string, unknown>;
}

export class RunUsageView implements RunUsage {
  @ApiProperty({ type: 'integer' })
  input_tokens: number;

  @ApiProperty({ type: 'integer' })
  output_tokens: number;

  @ApiPropertyOptional({ type: 'integer', description: 'Of the input, what the provider read from its prompt cache' })
  cached_input_tokens?: number;

  @ApiPropertyOptional({ enum: [true], description: "Some model call reported nothing: counted with the model family's tokenizer" })
  estimated?: true;

  @ApiPropertyOptional({ description: "What the run's calls cost, exact (12 decimals), when any was priced", example: '0.002200000000' })
  cost?: string;

  @ApiPropertyOptional({ example: 'USD' })
  currency?: string;
}

export class UsageEventView extends RunEventEnvelope implements UsageEventDict {
  @ApiProperty({ enum: ['usage'] })
  event_type: 'usage';

  @ApiProperty({ description: "The model's id", example: 'openai:gpt-4o' })
  model: string;

  @ApiProperty({ type: 'integer', description: "The call's number within the run" })
  call: number;

  @ApiProperty({ type: 'integer', description: 'Cached input included' })
  input_tokens: number;

  @ApiProperty({ type: 'integer' })
  output_tokens: number;

  @ApiProperty({ type: 'integer' })
  cached_input_tokens: number;

  @ApiPropertyOptional({ enum: [true], description: "The provider reported nothing: counted with the model family's tokenizer" })
  estimated?: true;

  @ApiProperty({ description: 'Exact, 12 decimals, from the price table when the call was made', example: '0.002200000000' })
  cost: string;

  @ApiProperty({ example: 'USD' })
  currency: string;

  @ApiPropertyOptional({ enum: [false], description: 'The price table has no price for the model (cost 0)' })
  priced?: false;
}

export class DoneEventView extends RunEventEnvelope implements DoneEventDict {
  @ApiProperty({ enum: ['done'] })
  event_type: 'done';

  @ApiProperty()
  cancelled: boolean;

  @ApiPropertyOptional()
  reason?: string;

  @ApiPropertyOptional({ type: RunUsageView, description: "Tokens over the run's model calls" })
  usage?: RunUsageView;
}

export class ElicitationRequestEventView extends RunEventEnvelope implements ElicitationRequestEventDict {
  @ApiProperty({ enum: ['elicitation_request'] })
  event_type: 'elicitation_request';

  @ApiProperty({ description: 'Answer it with POST /api/v1/elicitations/{request_id}, or elicitation_answer on a socket' })
  request_id: string;

  @ApiProperty({ description: 'The tool call the question belongs to' })
  tool_call_id: string;

  @ApiProperty({ description: 'The MCP server that asks' })
  server: string;

  @ApiProperty({ enum: ['form', 'url'] })
  mode: ElicitationMode;

  @ApiProperty()
  message: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'form: the fields asked for (a flat JSON Schema object)' })
  requested_schema?: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'url: the page the person is asked to open' })
  url?: string;

  @ApiProperty({ type: [String], enum: ['accept', 'decline', 'cancel'] })
  allowed_actions: ElicitationAction[];

  @ApiProperty({ format: 'date-time', description: 'No answer by then is cancel' })
  expires_at: string;
}

export class ElicitationEventView extends RunEventEnvelope implements ElicitationEventDict {
  @ApiProperty({ enum: ['elicitation'] })
  event_type: 'elicitation';

  @ApiProperty()
  request_id: string;

  @ApiProperty({ enum: ['accept', 'decline', 'cancel'] })
  action: ElicitationAction;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'What the server got: the accepted form, its defaults filled in' })
  content?: Record<string, unknown>;

  @ApiPropertyOptional({ enum: ['expired', 'cancelled'], description: 'Why nobody answered' })
  reason?: ElicitationEndReason;
}

/** Every event class: register them with `@ApiExtraModels(...RUN_EVENT_VIEWS)` where {@link RUN_EVENT} is used. */
export const RUN_EVENT_VIEWS = [
  RunQueuedEventView,
  RunStartedEventView,
  TextEventView,
  ToolCallEventView,
  ToolResultEventView,
  HitlRequestEventView,
  TodoUpdateEventView,
  FileOperationEventView,
  ElicitationRequestEventView,
  ElicitationEventView,
  UsageEventView,
  ErrorEventView,
  DoneEventView,
];

/** One run event: the schema is the one its `event_type` names. */
export const RUN_EVENT = { oneOf: RUN_EVENT_VIEWS.map((view) => ({ $ref: getSchemaPath(view) })) };
