import type { ChatMessage, ToolCallRequest, ToolSpec } from '../llm/chat-model.js';
import type { ToolContext, ToolResult } from '../tools/tool.js';

/** The state a model call is made from; middleware may rewrite messages and tools. */
export interface ModelCallState {
  sessionId: string;
  runId: string;
  iteration: number;
  messages: ChatMessage[];
  tools: ToolSpec[];
  /** The run's cancel signal, for middleware that waits on something (a classifier call). */
  signal?: AbortSignal;
}

export interface ModelResponse {
  text: string;
  toolCalls: ToolCallRequest[];
  finishReason: string;
}

export type ToolCallHandler = (call: ToolCallRequest, ctx: ToolContext) => Promise<ToolResult>;

/**
 * Hooks around the agent loop, in the shape of LangChain's AgentMiddleware:
 * before and after each model call, and around each tool call. Middleware runs in
 * the order configured; `wrapToolCall` layers are nested, the first outermost.
 */
export interface AgentMiddleware {
  readonly name: string;
  beforeModel?(state: ModelCallState): void | Promise<void>;
  afterModel?(state: ModelCallState, response: ModelResponse): void | Promise<void>;
  wrapToolCall?(call: ToolCallRequest, ctx: ToolContext, next: ToolCallHandler): Promise<ToolResult>;
}

/** Composes the `wrapToolCall` layers of `middleware` around `inner`. */
export function composeToolCall(middleware: readonly AgentMiddleware[], inner: ToolCallHandler): ToolCallHandler {
  return middleware.reduceRight<ToolCallHandler>(
    (next, mw) => (mw.wrapToolCall ? (call, ctx) => mw.wrapToolCall!(call, ctx, next) : next),
    inner,
  );
}
