import type Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsStreaming, RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import type { ChatModel, ModelChunk, ModelOptions, ModelRequest, ToolCallRequest } from '#core/llm/chat-model.js';
import { LlmRequestError, retryAfterSeconds } from '#core/llm/llm-request-error.js';
import { wireToolName } from '#core/tools/tool-names.js';
import { toAnthropicConversation, toAnthropicTool } from './anthropic-messages.js';
import { parseArguments, safeUrl } from './openai-chat-model.js';
import { abortError, describeCause, RequestWatch } from './stream-failures.js';

type AnthropicSdk = typeof import('@anthropic-ai/sdk');

/** The SDK, loaded at the first call: a process whose models are all OpenAI-compatible starts without it. */
let sdkLoading: Promise<AnthropicSdk> | undefined;
const loadSdk = (): Promise<AnthropicSdk> => (sdkLoading ??= import('@anthropic-ai/sdk'));

export const ANTHROPIC_API_URL = 'https://api.anthropic.com';

export interface AnthropicChatModelOptions {
  /** Without the `anthropic:` prefix, e.g. `claude-sonnet-4-5`. */
  model: string;
  apiKey: string;
  /** Anthropic's API by default; any server that speaks the Messages API. */
  baseUrl?: string;
  /** Most tokens of one answer: the Messages API requires a limit. Default 4096. */
  maxTokens?: number;
  /** Longest wait for the response to start, and then for each next event. Default 120 000. */
  timeoutMs?: number;
  /** Retries of failed requests before the stream starts (429, 529, 5xx, connection errors). Default 2. */
  maxRetries?: number;
}

/** Stop reasons in the engine's words (OpenAI's finish reasons). */
const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  refusal: 'content_filter',
};

/** Error events mid-stream carry a type, not a status: the status each type stands for. */
const ERROR_TYPE_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/**
 * A {@link ChatModel} on Anthropic's Messages API, streamed, through the official SDK.
 *
 * Text deltas are yielded as they arrive; `tool_use` blocks are assembled from their
 * `input_json_delta`s and yielded once, complete, after the stream ends, then the usage and the
 * finish. When `signal` fires the HTTP request is aborted and the iterator throws a `DOMException`
 * named `AbortError`. Failures throw {@link LlmRequestError} (its message names the endpoint and
 * model, never the key): rate limits (429) and overload (529), as an HTTP status or an error event
 * mid-stream, are recoverable and carry the provider's retry-after.
 */
export class AnthropicChatModel implements ChatModel {
  readonly id: string;
  private readonly clientOptions: NonNullable<ConstructorParameters<typeof Anthropic>[0]>;
  private client?: Anthropic;
  private sdk?: AnthropicSdk;
  private readonly model: string;
  private readonly apiKey: string;
  private readonly endpoint: string;
  private readonly maxTokens: number;
  private readonly timeoutMs: number;

  /** @throws Error without an API key. */
  constructor(options: AnthropicChatModelOptions) {
    const apiKey = options.apiKey.trim();
    if (apiKey === '') throw new Error('The Anthropic model needs ANTHROPIC_API_KEY.');
    const baseUrl = options.baseUrl?.trim() || ANTHROPIC_API_URL;
    this.model = options.model;
    this.apiKey = apiKey;
    this.endpoint = safeUrl(baseUrl);
    this.maxTokens = options.maxTokens ?? 4096;
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.id = `anthropic:${options.model}`;
    this.clientOptions = {
      apiKey,
      baseURL: baseUrl,
      // Ours (below) fires first and covers the whole request; this is only a backstop.
      timeout: this.timeoutMs + 1_000,
      maxRetries: options.maxRetries ?? 2,
      // Each model call is already an `llm.call` span of the run's trace.
      openTelemetry: false,
    };
  }

  private async connect(): Promise<Anthropic> {
    if (!this.client) {
      this.sdk = await loadSdk();
      this.client = new this.sdk.default(this.clientOptions);
    }
    return this.client;
  }

  /** Streams one message. @throws AbortError when `signal` fires; {@link LlmRequestError} on failure. */
  async *stream({ messages, tools, signal, options }: ModelRequest): AsyncIterable<ModelChunk> {
    if (signal.aborted) throw abortError();
    // Said before anything is sent: a client's option this API has no equivalent for is refused by name, never dropped.
    const refused = options ? unsupportedOptions(options) : [];
    if (refused.length > 0) throw new LlmRequestError(`The model ${this.model} (Anthropic's Messages API) takes no ${refused.join(' or ')}; send the request without ${refused.length > 1 ? 'them' : 'it'}`, 400);
    const watch = new RequestWatch(signal, this.timeoutMs);
    try {
      const { system, messages: wire } = toAnthropicConversation(messages);
      const params: MessageCreateParamsStreaming = { model: this.model, max_tokens: options?.maxTokens ?? this.maxTokens, messages: wire, stream: true };
      if (options?.stop !== undefined) params.stop_sequences = options.stop;
      if (system !== undefined) params.system = system;
      // Names with dots (MCP's `server.tool`) go out in a spelling the API accepts and come back as they were.
      const byWireName = new Map(tools.map((tool) => [wireToolName(tool.name), tool.name]));
      if (tools.length > 0) params.tools = tools.map(toAnthropicTool);
      let events: AsyncIterable<RawMessageStreamEvent>;
      try {
        events = await (await this.connect()).messages.create(params, { signal: watch.signal });
      } catch (err) {
        throw this.failure(err, signal, watch.timedOut);
      }
      watch.streaming();

      const calls = new Map<number, { id: string; name: string; json: string; input: unknown }>();
      const usage = { input: 0, output: 0, cached: 0 };
      let stopReason: string | null | undefined;
      let stopped = false;
      try {
        for await (const event of events) {
          watch.alive();
          if (event.type === 'message_start') {
            usage.input = inputTokens(event.message.usage) ?? 0;
            usage.output = event.message.usage.output_tokens;
            usage.cached = event.message.usage.cache_read_input_tokens ?? 0;
          } else if (event.type === 'content_block_start') {
            const block = event.content_block;
            if (block.type === 'text' && block.text) yield { type: 'text', text: block.text };
            else if (block.type === 'tool_use') calls.set(event.index, { id: block.id, name: block.name, json: '', input: block.input });
          } else if (event.type === 'content_block_delta') {
            const delta = event.delta;
            if (delta.type === 'text_delta' && delta.text) yield { type: 'text', text: delta.text };
            else if (delta.type === 'input_json_delta') {
              const call = calls.get(event.index);
              if (call) call.json += delta.partial_json;
            }
          } else if (event.type === 'message_delta') {
            stopReason = event.delta.stop_reason ?? stopReason;
            // Counts so far, not increments; input only when the server restates it.
            usage.input = inputTokens(event.usage) ?? usage.input;
            usage.output = event.usage.output_tokens;
          } else if (event.type === 'message_stop') {
            stopped = true;
          }
        }
      } catch (err) {
        throw this.failure(err, signal, watch.timedOut);
      }
      // Aborted mid-stream, the SDK ends its iterator quietly instead of throwing.
      if (signal.aborted || watch.timedOut) throw this.failure(undefined, signal, watch.timedOut);
      if (!stopped) throw new LlmRequestError(`LLM stream from ${this.where()} broke off before message_stop`).withoutAddress(this.endpoint);
      if (calls.size > 0) {
        const complete: ToolCallRequest[] = [...calls.entries()]
          .sort(([a], [b]) => a - b)
          .map(([, call]) => ({ id: call.id, name: byWireName.get(call.name) ?? call.name, arguments: call.json !== '' ? parseArguments(call.json) : inputObject(call.input) }));
        yield { type: 'tool_calls', calls: complete };
      }
      yield { type: 'usage', inputTokens: usage.input, outputTokens: usage.output, ...(usage.cached > 0 ? { cachedInputTokens: usage.cached } : {}) };
      yield { type: 'finish', reason: stopReason ? (FINISH_REASONS[stopReason] ?? stopReason) : calls.size > 0 ? 'tool_calls' : 'stop' };
    } finally {
      watch.dispose();
    }
  }

  private where(): string {
    return `${this.endpoint} (model ${this.model})`;
  }

  /**
   * Turns whatever the SDK threw into an AbortError or a {@link LlmRequestError} free of secrets.
   * @param timedOut the stage our timer expired in, if it did.
   */
  private failure(err: unknown, signal: AbortSignal, timedOut: 'connecting' | 'streaming' | undefined): Error {
    const failure = this.describeFailure(err, signal, timedOut);
    return failure instanceof LlmRequestError ? failure.withoutAddress(this.endpoint) : failure;
  }

  private describeFailure(err: unknown, signal: AbortSignal, timedOut: 'connecting' | 'streaming' | undefined): Error {
    if (signal.aborted) return abortError();
    const where = this.where();
    // Only an error the SDK threw is one of its classes; before it loaded there is none.
    const sdk = this.sdk;
    if (timedOut === 'connecting' || (sdk && err instanceof sdk.APIConnectionTimeoutError)) {
      return new LlmRequestError(`LLM at ${where} did not start answering within ${this.timeoutMs} ms (DATAAGENT_LLM_TIMEOUT_MS)`);
    }
    if (timedOut === 'streaming') {
      return new LlmRequestError(`LLM stream from ${where} went silent for ${this.timeoutMs} ms (DATAAGENT_LLM_TIMEOUT_MS)`);
    }
    if (sdk && err instanceof sdk.APIUserAbortError) return abortError();
    if (sdk && err instanceof sdk.APIConnectionError) {
      const cause = describeCause(err.cause);
      return new LlmRequestError(this.redact(`Could not reach the LLM at ${where}${cause ? `: ${cause}` : ''}. Is ANTHROPIC_BASE_URL right and the server up?`));
    }
    if (sdk && err instanceof sdk.APIError) {
      const status = err.status ?? (err.type ? ERROR_TYPE_STATUS[err.type] : undefined);
      const detail = err.apiMessage ?? err.message;
      const hint =
        status === 401 || status === 403 ? ' Check ANTHROPIC_API_KEY.'
        : status === 404 ? ' Check the model name and ANTHROPIC_BASE_URL.'
        : status === 429 ? ' Rate limited.'
        : status === 529 ? ' Overloaded.'
        : '';
      const what = err.status ? `answered ${err.status} ${detail}` : `reported ${err.type ?? 'an error'} mid-stream: ${detail}`;
      return new LlmRequestError(this.redact(`LLM request to ${where} failed: the server ${what}.${hint}`), status, retryAfterSeconds(err.headers));
    }
    return new LlmRequestError(this.redact(`LLM stream from ${where} broke off: ${describeCause(err) || 'unknown error'}`));
  }

  /** Servers may echo (part of) the key back. */
  private redact(text: string): string {
    return text.split(this.apiKey).join('***').replace(/\bsk-ant-[A-Za-z0-9_*-]{4,}/g, 'sk-ant-***');
  }
}

/** All input tokens, cached ones included; undefined when the event does not say. */
function inputTokens(usage: { input_tokens: number | null; cache_creation_input_tokens: number | null; cache_read_input_tokens: number | null }): number | undefined {
  if (usage.input_tokens === null || usage.input_tokens === undefined) return undefined;
  return usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
}

/** A tool_use block's `input` when no delta refined it: an object, or nothing usable. */
function inputObject(input: unknown): Record<string, unknown> {
  return input !== null && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

/** The client's options the Messages API (as this SDK speaks it) has no equivalent for: `temperature`, `seed`, a response format other than text. */
function unsupportedOptions(options: ModelOptions): string[] {
  return [
    ...(options.temperature === undefined ? [] : ['temperature']),
    ...(options.seed === undefined ? [] : ['seed']),
    ...(options.responseFormat === undefined || options.responseFormat.type === 'text' ? [] : ['response_format']),
  ];
}
