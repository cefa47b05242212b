/** Conversation messages as the engine and providers see them (OpenAI's shape, camelCase). */
export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCallRequest {
  /** Provider's id for native calls; generated otherwise. */
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ChatMessage {
  role: ChatRole;
  content: string;
  /** Tool name, for role "tool". */
  name?: string;
  /** The call this message answers, for role "tool". */
  toolCallId?: string;
  /** Native tool calls the assistant made. */
  toolCalls?: ToolCallRequest[];
}

/** A tool as the model is told about it. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** How a client asked the model to sample (the OpenAI-compatible door passes them through). Absent: the provider's defaults. */
export interface ModelOptions {
  temperature?: number;
  /** Most tokens of one answer. */
  maxTokens?: number;
  /** Up to 4 sequences that end an answer. */
  stop?: string[];
  seed?: number;
  /** OpenAI's `response_format`: `{type: 'text' | 'json_object'}` or `{type: 'json_schema', json_schema}`. */
  responseFormat?: { type: string; [field: string]: unknown };
}

export interface ModelRequest {
  messages: ChatMessage[];
  tools: ToolSpec[];
  signal: AbortSignal;
  options?: ModelOptions;
}

/** What a streaming model yields: text as it comes, native tool calls once complete, usage (if known) before the finish. */
export type ModelChunk =
  | { type: 'text'; text: string }
  | { type: 'tool_calls'; calls: ToolCallRequest[] }
  /** Tokens the call consumed, as the provider counted them (input includes cached input: read from the provider's prompt cache). */
  | { type: 'usage'; inputTokens: number; outputTokens: number; cachedInputTokens?: number }
  /** How the answer ended, in OpenAI's words: `stop`, `tool_calls`, `length`, `content_filter`. */
  | { type: 'finish'; reason: string };

/** An LLM provider. Implementations abort their request when `signal` fires. */
export interface ChatModel {
  readonly id: string;
  stream(request: ModelRequest): AsyncIterable<ModelChunk>;
}
