import type { ElicitationPrompt, ExecutionEvent, EventEnvelope } from '../events/execution-event.js';
import type { Caller } from '../auth/caller.js';
import type { ElicitationAnswer } from '../hitl/elicitation.js';

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
  /**
   * Asks the run's person something on the tool's behalf (an MCP server's elicitation), while
   * the call waits: the question and its outcome go into the run's stream at once, and the call's
   * timeouts do not run meanwhile. `signal` withdraws the question (`cancel`). Absent: nobody can
   * be asked in this run.
   */
  elicit?(prompt: ElicitationPrompt, signal: AbortSignal): Promise<ElicitationAnswer>;
}

export interface ToolResult {
  success: boolean;
  /** What goes back to the model as the tool message content. */
  output: unknown;
  error?: string;
  /** The outcome's kind when success/error does not say it all (a tool that enforces its own timeout says `timeout`). */
  status?: 'success' | 'error' | 'timeout' | 'cancelled';
  /**
   * The tool's own result in full, for people and clients only: the `tool_result` event's
   * `content` (an MCP tool's content blocks with their images, say). The model gets `output`.
   */
  content?: unknown;
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
  /**
   * The call changes nothing outside the run (a read): after a worker dies mid-call, the run's
   * next worker simply runs it again. A function decides per call. Default: false.
   */
  readonly readOnly?: boolean | ((args: Record<string, unknown>) => boolean);
  /**
   * Running it twice with the same arguments has the effect of running it once: after a worker
   * dies mid-call, it runs again instead of being reported `interrupted`. Default: false.
   */
  readonly idempotent?: boolean;
  /** Per-tool timeout; the dispatcher's default applies when absent. */
  readonly timeoutMs?: number;
  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

/** Whether a call of this tool only reads (see {@link Tool.readOnly}). */
export function isReadOnlyCall(tool: Tool, args: Record<string, unknown>): boolean {
  return typeof tool.readOnly === 'function' ? tool.readOnly(args) : tool.readOnly === true;
}
