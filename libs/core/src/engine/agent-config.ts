import type { ChatModel, ModelOptions, ToolSpec } from '../llm/chat-model.js';
import type { ElicitationHandler } from '../hitl/elicitation.js';
import type { ApprovalPolicy, HitlHandler } from '../hitl/hitl-handler.js';
import type { Tool } from '../tools/tool.js';
import type { AgentMiddleware } from './agent-middleware.js';
import type { PriceTable } from '../usage/price-table.js';

/** Everything that defines an assistant. */
export interface AgentConfig {
  /** Assistant id clients pass as assistant_id. */
  id: string;
  name: string;
  description: string;
  systemPrompt: string;
  model: ChatModel;
  /** Sampling a run's client asked for, passed to every model call of the run. */
  modelOptions?: ModelOptions;
  tools: Tool[];
  /**
   * Tools the run's client runs itself (the OpenAI-compatible door's `tools`): offered to the
   * model beside `tools`, never run here. A turn that calls one ends the run (`done{reason:
   * 'tool_calls'}`) after the turn's own tools ran; a name one of `tools` has fails the run
   * (`client_tool_conflict`).
   */
  clientTools?: ToolSpec[];
  middleware: AgentMiddleware[];
  /** Asks a person before sensitive tools; absent means approve everything. */
  hitl?: HitlHandler;
  /** Asks the run's person what a tool's MCP server wants to know during a call; absent: nobody can be asked. */
  elicitation?: ElicitationHandler;
  /** Which calls need approval; default: the tool's own `sensitive` / `requiresApproval`. */
  approvalPolicy?: ApprovalPolicy;
  /** Model calls per run before the loop stops (ReAct iterations). */
  maxIterations: number;
  /** Tool calls per run before the loop stops. */
  maxToolCallsPerTurn: number;
  toolTimeoutMs: number;
  /** UTF-8 bytes of one tool result before it is cut with a marker; default DEFAULT_TOOL_RESULT_MAX_BYTES. */
  toolResultMaxBytes?: number;
  /** Joins text deltas that queue up within this many ms into one event (coalesceText); 0 or absent: off. */
  textCoalesceMs?: number;
  /** Parse `<tool_action>` tags in the model's text (for models without native tool calls). Default true. */
  enableToolActionParsing?: boolean;
  /** Parse a whole reply of the form {"response", "tool_call"} (models prompted to answer in JSON). Default true. */
  enableJsonToolCalls?: boolean;
  /** Prices each model call's usage; absent, calls cost nothing (and say they are not priced). */
  prices?: PriceTable;
  /** Tokens (input and output) the run's model calls may use in all; absent or 0, no limit. */
  maxRunTokens?: number;
  /** Output tokens a budgeted call reserves and may produce when the client set no max_tokens. Default DEFAULT_MAX_OUTPUT_TOKENS. */
  defaultMaxOutputTokens?: number;
}

/** Output tokens a call under a budget may produce unless its client asked for fewer. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

export const AGENT_DEFAULTS = {
  maxIterations: 10,
  maxToolCallsPerTurn: 3,
  toolTimeoutMs: 30_000,
} as const;
