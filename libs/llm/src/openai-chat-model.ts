import { randomUUID } from 'node:crypto';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ChatMessage, ChatModel, ModelChunk, ModelOptions, ModelRequest, ToolCallRequest, ToolSpec } from '#core/llm/chat-model.js';
import { LlmRequestError, retryAfterSeconds } from '#core/llm/llm-request-error.js';
import { wireToolName } from '#core/tools/tool-names.js';
import { leanFetch } from './lean-fetch.js';
import { SseChunkReader } from './sse-chunk-reader.js';
import { abortError, describeCause, RequestWatch } from './stream-failures.js';

/** Sent as the bearer token to servers that need none (Ollama, vLLM, llama.cpp, LM Studio). */
export const PLACEHOLDER_API_KEY = 'not-needed';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAIChatModelOptions {
  model: string;
  /** Without one, `baseUrl` is required and {@link PLACEHOLDER_API_KEY} is sent. */
  apiKey?: string;
  /** Any OpenAI-compatible endpoint, e.g. `http://127.0.0.1:11434/v1`. Default: OpenAI's. */
  baseUrl?: string;
  /** Longest wait for the response to start, and then for each next chunk. Default 120 000. */
  timeoutMs?: number;
  /** Retries of failed requests before the stream starts (429, 5xx, connection errors). Default 2. */
  maxRetries?: number;
  /** Ask for the answer's token usage (`stream_options.include_usage`). Default true. */
  streamUsage?: boolean;
}

/**
 * A {@link ChatModel} for OpenAI and every OpenAI-compatible server.
 *
 * The official SDK makes the request (auth headers, retries, HTTP errors) over {@link leanFetch};
 * the streamed body is read by {@link SseChunkReader} rather than the SDK's `Stream`, whose
 * layers of async iterators cost the most of it. Together they take 40 to 60 % off the client
 * CPU per streamed chunk (bench/llm-stream-bench.ts).
 *
 * Text deltas are yielded as they arrive; native tool calls are assembled from their deltas and
 * yielded once, complete, after the stream ends. When `signal` fires the HTTP request is aborted
 * and the iterator throws a `DOMException` named `AbortError` (never the SDK's
 * `APIUserAbortError`, whose `name` is plain `Error`, and never a silent end). Failures
 * (HTTP errors, error events mid-stream, dropped connections, `timeoutMs` of silence before or
 * during the stream) throw {@link LlmRequestError}, whose message names the endpoint and model
 * and has the API key redacted. A consumer that stops early closes the connection.
 */
export class OpenAIChatModel implements ChatModel {
  readonly id: string;
  private readonly client: OpenAI;
  private readonly model: string;
  private readonly apiKey?: string;
  private readonly endpoint: string;
  private readonly timeoutMs: number;
  private readonly streamUsage: boolean;

  /** @throws Error when neither an API key nor a base URL is given. */
  constructor(options: OpenAIChatModelOptions) {
    const apiKey = options.apiKey?.trim() || undefined;
    const baseUrl = options.baseUrl?.trim() || undefined;
    if (!apiKey && !baseUrl) {
      throw new Error('The OpenAI model needs OPENAI_API_KEY, or OPENAI_BASE_URL for an OpenAI-compatible server that needs no key.');
    }
    this.model = options.model;
    this.apiKey = apiKey;
    this.endpoint = safeUrl(baseUrl ?? DEFAULT_BASE_URL);
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.streamUsage = options.streamUsage ?? true;
    this.id = `openai:${options.model}`;
    this.client = new OpenAI({
      apiKey: apiKey ?? PLACEHOLDER_API_KEY,
      baseURL: baseUrl ?? DEFAULT_BASE_URL,
      // Ours (below) fires first and covers the whole request; this is only a backstop.
      timeout: this.timeoutMs + 1_000,
      maxRetries: options.maxRetries ?? 2,
      fetch: leanFetch,
      // The SDK would otherwise add OPENAI_ORG_ID / OPENAI_PROJECT_ID from the environment, which
      // makes OpenAI reject keys of other organisations and is meaningless to compatible servers.
      organization: null,
      project: null,
    });
  }

  /** Streams one completion. @throws AbortError when `signal` fires; {@link LlmRequestError} on failure. */
  async *stream({ messages, tools, signal, options }: ModelRequest): AsyncIterable<ModelChunk> {
    if (signal.aborted) throw abortError();
    const watch = new RequestWatch(signal, this.timeoutMs);
    try {
      const params: ChatCompletionCreateParamsStreaming = { model: this.model, messages: toWireMessages(messages), stream: true };
      // The usage comes in a last chunk with no choices.
      if (this.streamUsage) params.stream_options = { include_usage: true };
      // Names with dots (MCP's `server.tool`) go out in a spelling the API accepts and come back as they were.
      const byWireName = new Map(tools.map((tool) => [wireToolName(tool.name), tool.name]));
      if (tools.length > 0) params.tools = tools.map(toWireTool);
      if (options) Object.assign(params, samplingParams(options));
      let reader: SseChunkReader;
      try {
        reader = new SseChunkReader(await this.client.chat.completions.create(params, { signal: watch.signal }).asResponse());
      } catch (err) {
        throw this.failure(err, signal, watch.timedOut);
      }
      watch.streaming();

      const calls = new ToolCallAssembler();
      let finishReason: string | undefined;
      let usage: ChatCompletionChunk['usage'];
      let ended = false;
      try {
        for (let batch = await reader.read(); batch !== null; batch = await reader.read()) {
          watch.alive();
          for (const chunk of batch as readonly ChatCompletionChunk[]) {
            if (chunk.usage) usage = chunk.usage;
            const choice = chunk.choices?.[0];
            if (!choice) continue;
            const delta = choice.delta;
            if (delta?.content) yield { type: 'text', text: delta.content };
            if (delta?.tool_calls) calls.add(delta.tool_calls);
            if (choice.finish_reason) finishReason = choice.finish_reason;
          }
        }
        ended = true;
      } catch (err) {
        throw this.failure(err, signal, watch.timedOut);
      } finally {
        // The consumer stopped early (or the stream failed): release the connection.
        if (!ended) void reader.cancel();
      }
      // A cancel that lands as the body ends still cancels: no late tool calls or finish.
      if (signal.aborted || watch.timedOut) throw this.failure(undefined, signal, watch.timedOut);
      if (calls.size > 0) yield { type: 'tool_calls', calls: calls.complete().map((call) => ({ ...call, name: byWireName.get(call.name) ?? call.name })) };
      if (usage && typeof usage.prompt_tokens === 'number' && typeof usage.completion_tokens === 'number') {
        const cached = usage.prompt_tokens_details?.cached_tokens;
        yield { type: 'usage', inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens, ...(typeof cached === 'number' && cached > 0 ? { cachedInputTokens: cached } : {}) };
      }
      yield { type: 'finish', reason: finishReason ?? 'stop' };
    } finally {
      watch.dispose();
    }
  }

  /**
   * Turns whatever the SDK or the body's reader threw into an AbortError or a {@link LlmRequestError} free of secrets.
   * @param timedOut the stage our timer expired in, if it did.
   */
  private failure(err: unknown, signal: AbortSignal, timedOut: 'connecting' | 'streaming' | undefined): Error {
    const failure = this.describeFailure(err, signal, timedOut);
    return failure instanceof LlmRequestError ? failure.withoutAddress(this.endpoint) : failure;
  }

  private describeFailure(err: unknown, signal: AbortSignal, timedOut: 'connecting' | 'streaming' | undefined): Error {
    if (signal.aborted) return abortError();
    const where = `${this.endpoint} (model ${this.model})`;
    if (timedOut === 'connecting' || err instanceof APIConnectionTimeoutError) {
      return new LlmRequestError(`LLM at ${where} did not start answering within ${this.timeoutMs} ms (DATAAGENT_LLM_TIMEOUT_MS)`);
    }
    if (timedOut === 'streaming') {
      return new LlmRequestError(`LLM stream from ${where} went silent for ${this.timeoutMs} ms (DATAAGENT_LLM_TIMEOUT_MS)`);
    }
    if (err instanceof APIUserAbortError) return abortError(); // not ours: cannot happen, but is an abort
    if (err instanceof APIConnectionError) {
      const cause = describeCause(err.cause);
      return new LlmRequestError(this.redact(`Could not reach the LLM at ${where}${cause ? `: ${cause}` : ''}. Is OPENAI_BASE_URL right and the server up?`));
    }
    if (err instanceof APIError) {
      const status = err.status;
      const hint =
        status === 401 || status === 403 ? ' Check OPENAI_API_KEY.'
        : status === 404 ? ' Check DATAAGENT_MODEL and OPENAI_BASE_URL.'
        : status === 429 ? ' Rate limited or out of quota.'
        : '';
      const what = status ? `answered ${err.message}` : `reported an error mid-stream: ${err.message}`;
      return new LlmRequestError(this.redact(`LLM request to ${where} failed: the server ${what}.${hint}`), status, retryAfterSeconds(err.headers));
    }
    return new LlmRequestError(this.redact(`LLM stream from ${where} broke off: ${describeCause(err) || 'unknown error'}`));
  }

  /** Servers may echo (part of) the key back, e.g. OpenAI's "Incorrect API key provided: sk-…". */
  private redact(text: string): string {
    let out = this.apiKey ? text.split(this.apiKey).join('***') : text;
    out = out.replace(/\bsk-[A-Za-z0-9_*-]{4,}/g, 'sk-***');
    return out;
  }
}

/** Collects streamed tool-call deltas by their index into whole calls. */
class ToolCallAssembler {
  private readonly calls = new Map<number, { id?: string; name: string; args: string }>();
  private lastIndex = -1;

  get size(): number {
    return this.calls.size;
  }

  add(deltas: ChatCompletionChunk.Choice.Delta.ToolCall[]): void {
    for (const delta of deltas) {
      // Some compatible servers omit `index`: a new id starts a new call, otherwise it continues the last.
      let index = delta.index;
      if (typeof index !== 'number') {
        const known = [...this.calls].find(([, c]) => delta.id !== undefined && c.id === delta.id);
        index = known ? known[0] : delta.id !== undefined || this.lastIndex < 0 ? this.calls.size : this.lastIndex;
      }
      this.lastIndex = index;
      let call = this.calls.get(index);
      if (!call) this.calls.set(index, (call = { name: '', args: '' }));
      if (delta.id && !call.id) call.id = delta.id;
      const name = delta.function?.name;
      // OpenAI sends the name once; some servers repeat it on every delta.
      if (name && name !== call.name) call.name += name;
      const args: unknown = delta.function?.arguments;
      if (typeof args === 'string') call.args += args;
      else if (args !== undefined && args !== null) call.args += JSON.stringify(args);
    }
  }

  complete(): ToolCallRequest[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({ id: call.id ?? `call_${randomUUID()}`, name: call.name, arguments: parseArguments(call.args) }));
  }
}

/** Arguments as an object; text that is not a JSON object comes back as `{ _raw }` for the tool layer to report. */
export function parseArguments(raw: string): Record<string, unknown> {
  if (raw.trim() === '') return {};
  try {
    let parsed: unknown = JSON.parse(raw);
    if (typeof parsed === 'string') parsed = JSON.parse(parsed); // double-encoded by some servers
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  return { _raw: raw };
}

/**
 * Our messages in OpenAI's wire format. OpenAI rejects a conversation whose tool messages and
 * assistant tool calls do not pair up (a run cancelled between the two leaves such a history),
 * so unanswered calls get a placeholder result and orphan results become plain user text.
 */
export function toWireMessages(messages: ChatMessage[]): ChatCompletionMessageParam[] {
  const wire: ChatCompletionMessageParam[] = [];
  let pending = new Map<string, string>(); // call id → tool name, of the last assistant turn
  const closePending = () => {
    for (const [id, name] of pending) {
      wire.push({ role: 'tool', tool_call_id: id, content: JSON.stringify({ success: false, error: `no result was recorded for ${name}` }) });
    }
    pending = new Map();
  };
  for (const message of messages) {
    if (message.role === 'tool') {
      const id = message.toolCallId;
      if (id !== undefined && pending.has(id)) {
        pending.delete(id);
        wire.push({ role: 'tool', tool_call_id: id, content: message.content });
      } else {
        closePending();
        wire.push({ role: 'user', content: `Result of tool ${message.name ?? 'call'}: ${message.content}` });
      }
      continue;
    }
    closePending();
    if (message.role === 'assistant') {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) {
        wire.push({ role: 'assistant', content: message.content });
        continue;
      }
      wire.push({
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: 'function' as const,
          function: { name: wireToolName(call.name), arguments: wireArguments(call.arguments) },
        })),
      });
      for (const call of calls) pending.set(call.id, call.name);
    } else {
      wire.push({ role: message.role, content: message.content });
    }
  }
  closePending();
  return wire;
}

function wireArguments(args: Record<string, unknown>): string {
  const keys = Object.keys(args);
  // Send back what the model wrote when it was not JSON, so its next turn sees its own mistake.
  if (keys.length === 1 && keys[0] === '_raw' && typeof args._raw === 'string') return args._raw;
  return JSON.stringify(args);
}

function toWireTool(tool: ToolSpec): ChatCompletionTool {
  const parameters = Object.keys(tool.parameters).length > 0 ? tool.parameters : { type: 'object', properties: {} };
  return { type: 'function', function: { name: wireToolName(tool.name), description: tool.description, parameters } };
}

/** Scheme, host and path only: no credentials or query that might carry a key. */
export function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/$/, '')}`;
  } catch {
    return '(invalid URL)';
  }
}

/** A client's sampling options in the Chat Completions API's words (only those it gave). */
function samplingParams(options: ModelOptions): Partial<ChatCompletionCreateParamsStreaming> {
  return {
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    // max_tokens: what OpenAI-compatible servers (vLLM, Ollama, LiteLLM) read; OpenAI takes it too.
    ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
    ...(options.stop === undefined ? {} : { stop: options.stop }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.responseFormat === undefined ? {} : { response_format: options.responseFormat as ChatCompletionCreateParamsStreaming['response_format'] }),
  };
}
