import type { ExecutionEvent, EventEnvelope } from '../events/execution-event.js';
import type { Caller } from '../session/caller.js';

/** What a tool may use while it runs. */
export interface ToolContext {
  caller: Caller;
  sessionId: string;
  runId: string;
  toolCallId: string;
  /** Fires on cancel or timeout; long work must stop when it does. */
  signal: AbortSignal;
  /** Emits an extra event (todo_update, file_operation) into the run's stream. */
  emit(build: (envelope: EventEnvelope) => ExecutionEvent): void;
}

export interface ToolResult {
  success: boolean;
  /** What goes back to the model as the tool message content. */
  output: unknown;
  error?: string;
}

export interface Tool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments object. */
  readonly parameters: Record<string, unknown>;
  /** Sensitive tools ask a person before they run. */
  readonly sensitive?: boolean;
  /** For tools whose sensitivity depends on the call (http_request: any method but GET). */
  requiresApproval?(args: Record<string, unknown>): boolean;
  /** Per-tool timeout; the dispatcher's default applies when absent. */
  readonly timeoutMs?: number;
  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}
