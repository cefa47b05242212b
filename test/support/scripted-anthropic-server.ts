/**
 * An Anthropic-compatible Messages API server for tests.
 *
 * It answers `POST /v1/messages` with `stream: true` over real Server-Sent Events, as Anthropic
 * does: `message_start`, a `ping`, per block `content_block_start` → `content_block_delta`
 * (`text_delta`, or `input_json_delta` pieces of a `tool_use`) → `content_block_stop`, then
 * `message_delta` (stop reason and usage) and `message_stop`. Failures are an HTTP error with
 * Anthropic's error body (and `retry-after` on 429 and 529) before the stream starts, or an
 * `error` event after. So the official `@anthropic-ai/sdk` runs unmodified against it, in this
 * process or in a worker (point `ANTHROPIC_BASE_URL` at `baseUrl`). It listens on loopback only.
 *
 * Like the API, it refuses (400 `invalid_request_error`, listed in `refused`) a request that
 * breaks the Messages API's rules: no key (`x-api-key` or a bearer token), no
 * `anthropic-version`, no `max_tokens`, a `system` role among the messages, roles that do not
 * alternate starting with `user`, empty text blocks, a `tool_use` whose `tool_result` is not at
 * the head of the next user turn, a `tool_result` without its `tool_use`, or a tool whose name
 * or schema the API would refuse.
 *
 * ## Directives (the default script)
 *
 * Read from the text of the last user turn that has text: `[[chunks:N]]` (N text deltas `tok0 `, `tok1 `, …),
 * `[[tool:NAME {json}]]` (a `tool_use` block; once the last user turn holds tool results, the
 * answer is `Tool NAME returned: <result>` instead), `[[slow:MS]]` (pause between deltas),
 * `[[delay:MS]]` (before the response starts), `[[hang]]` (stay open and silent after the text),
 * `[[drop]]` (cut the connection after the text), `[[error:STATUS]]` (answer HTTP STATUS).
 * Without one the answer is `Hello from the scripted Anthropic server.` in four deltas.
 *
 * Usage is reported as `input_tokens` = 10 per message, `cache_read_input_tokens` = 2, and
 * `output_tokens` = one per delta and per tool_use block.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseToolDirectives } from './scripted-llm-server.js';

/** One thing the server does while answering, in order. */
export type AnthropicStep =
  | { text: string }
  /** A tool_use block, its input streamed as `input_json_delta` pieces. */
  | { toolUse: { name: string; input: Record<string, unknown> | string; id?: string } }
  | { delayMs: number }
  /** Pause between later deltas of this stream. */
  | { chunkIntervalMs: number }
  /** Stay silent with the stream open until the client leaves or the server stops. */
  | { hang: true }
  /** HTTP error before the stream starts, or an SSE `error` event if it already has. */
  | { httpError: number; message?: string; retryAfter?: string }
  /** The stop reason of `message_delta`, instead of `tool_use` / `end_turn`. */
  | { stopReason: string }
  | { dropConnection: true };

export type ContentBlock = { type: string; text?: string; id?: string; name?: string; input?: unknown; tool_use_id?: string; content?: unknown; is_error?: boolean };
export interface AnthropicMessage {
  role: string;
  content: string | ContentBlock[];
}

/** A request as received; `headers` are verbatim (the key included): never log them. */
export interface RecordedAnthropicRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: {
    model?: string;
    max_tokens?: number;
    system?: string | Array<{ type: string; text: string }>;
    messages?: AnthropicMessage[];
    tools?: Array<{ name: string; description?: string; input_schema?: Record<string, unknown> }>;
    stream?: boolean;
    [key: string]: unknown;
  };
}

/** Error types of Anthropic's error bodies and events, by HTTP status. */
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

/** A Messages API streaming server on loopback that plays scripted answers. */
export class ScriptedAnthropicServer {
  /** Requests received (valid or not), oldest first. */
  requests: RecordedAnthropicRequest[] = [];
  /** Requests refused as the API would, with the reason. */
  refused: string[] = [];
  openStreams = 0;
  /** Streams the client abandoned before they finished. */
  abortedStreams = 0;

  private script: (req: RecordedAnthropicRequest) => AnthropicStep[] = defaultAnthropicScript;
  private readonly active = new Set<AbortController>();
  private idleWaiters: Array<() => void> = [];
  private requestWaiters: Array<(req: RecordedAnthropicRequest) => void> = [];
  private nextId = 0;
  private stopping = false;

  private constructor(
    private readonly server: Server,
    /** What ANTHROPIC_BASE_URL takes (the SDK adds `/v1/messages`). */
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<ScriptedAnthropicServer> {
    let instance: ScriptedAnthropicServer | undefined;
    const server = createServer({ noDelay: true }, (req, res) => {
      instance!.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendError(res, 500, `scripted server failed: ${String(err)}`);
        else res.destroy();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    instance = new ScriptedAnthropicServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return instance;
  }

  /** Replaces the script for later requests; without an argument, restores the default. */
  setScript(fn: (req: RecordedAnthropicRequest) => AnthropicStep[] = defaultAnthropicScript): void {
    this.script = fn;
  }

  /** Resolves when no stream is open. */
  idle(): Promise<void> {
    if (this.openStreams === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Resolves with the next request, as soon as it is recorded. */
  nextRequest(): Promise<RecordedAnthropicRequest> {
    return new Promise((resolve) => this.requestWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const controller of this.active) controller.abort();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method !== 'POST' || path !== '/v1/messages') return sendError(res, 404, `no route ${req.method} ${path}`);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: RecordedAnthropicRequest['body'];
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return sendError(res, 400, 'request body is not JSON');
    }
    const recorded: RecordedAnthropicRequest = { path, headers: req.headers, body };
    this.requests.push(recorded);
    for (const resolve of this.requestWaiters.splice(0)) resolve(recorded);
    const problem = requestProblem(recorded);
    if (problem) {
      this.refused.push(problem);
      return sendError(res, apiKeyOf(req.headers) ? 400 : 401, problem);
    }
    await this.play(res, recorded, this.script(recorded));
  }

  private async play(res: ServerResponse, request: RecordedAnthropicRequest, steps: AnthropicStep[]): Promise<void> {
    const controller = new AbortController();
    const signal = controller.signal;
    let droppedByServer = false;
    this.active.add(controller);
    this.openStreams++;
    res.on('close', () => {
      this.active.delete(controller);
      if (!res.writableFinished && !droppedByServer && !this.stopping) this.abortedStreams++;
      controller.abort();
      if (--this.openStreams === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    });

    const out = new MessageStream(res, request.body.model ?? 'scripted', `msg_${++this.nextId}`, 10 * (request.body.messages?.length ?? 0));
    let interval = 0;
    let deltas = 0;
    const pace = async () => {
      if (deltas++ > 0 && interval > 0) await sleep(interval, undefined, { signal });
    };
    try {
      for (const step of steps) {
        if (signal.aborted) return;
        if ('delayMs' in step) await sleep(step.delayMs, undefined, { signal });
        else if ('chunkIntervalMs' in step) interval = step.chunkIntervalMs;
        else if ('stopReason' in step) out.stopReason = step.stopReason;
        else if ('text' in step) {
          await pace();
          await out.text(step.text);
        } else if ('toolUse' in step) {
          const { name, input, id } = step.toolUse;
          const json = typeof input === 'string' ? input : JSON.stringify(input);
          for (const piece of out.toolUse(id ?? `toolu_${this.nextId}_${Math.random().toString(36).slice(2, 10)}`, name, json)) {
            await pace();
            await piece();
          }
        } else if ('hang' in step) {
          out.open();
          if (!signal.aborted) await once(signal, 'abort');
          return;
        } else if ('httpError' in step) {
          out.error(step.httpError, step.message ?? `scripted error ${step.httpError}`, step.retryAfter);
          return;
        } else if ('dropConnection' in step) {
          out.open();
          droppedByServer = true;
          const socket = res.socket;
          if (socket) socket.write('', () => socket.destroy());
          return;
        }
      }
      out.finish();
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
  }
}

/** Writes one streamed message as Messages API events. */
class MessageStream {
  stopReason?: string;
  private index = -1;
  private openBlock: 'text' | 'tool_use' | null = null;
  private toolUses = 0;
  private outputTokens = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly model: string,
    private readonly id: string,
    private readonly inputTokens: number,
  ) {}

  /** Headers, `message_start` and a `ping`, once. */
  open(): void {
    if (this.res.headersSent) return;
    this.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': `req_${this.id}` });
    this.event('message_start', {
      type: 'message_start',
      message: {
        id: this.id,
        type: 'message',
        role: 'assistant',
        content: [],
        model: this.model,
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: this.inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 2, output_tokens: 1 },
      },
    });
    this.event('ping', { type: 'ping' });
  }

  text(text: string): Promise<void> {
    this.open();
    if (this.openBlock !== 'text') {
      this.closeBlock();
      this.openBlock = 'text';
      this.event('content_block_start', { type: 'content_block_start', index: ++this.index, content_block: { type: 'text', text: '' } });
    }
    this.outputTokens++;
    return this.event('content_block_delta', { type: 'content_block_delta', index: this.index, delta: { type: 'text_delta', text } });
  }

  /** The block's events, each sent when invoked: the start and an empty delta, then the input JSON in up to four pieces, then the stop. */
  toolUse(id: string, name: string, json: string): Array<() => Promise<void>> {
    const pieces: Array<() => Promise<void>> = [
      () => {
        this.open();
        this.closeBlock();
        this.openBlock = 'tool_use';
        this.toolUses++;
        this.outputTokens++;
        this.event('content_block_start', { type: 'content_block_start', index: ++this.index, content_block: { type: 'tool_use', id, name, input: {} } });
        return this.delta('');
      },
    ];
    const size = Math.max(1, Math.ceil(json.length / 4));
    for (let at = 0; at < json.length; at += size) {
      const part = json.slice(at, at + size);
      pieces.push(() => this.delta(part));
    }
    return pieces;
  }

  error(status: number, message: string, retryAfter = status === 429 || status === 529 ? '7' : undefined): void {
    if (!this.res.headersSent) return sendError(this.res, status, message, retryAfter);
    this.event('error', { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } });
    this.res.end();
  }

  finish(): void {
    this.open();
    this.closeBlock();
    this.event('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: this.stopReason ?? (this.toolUses > 0 ? 'tool_use' : 'end_turn'), stop_sequence: null },
      usage: { output_tokens: this.outputTokens },
    });
    this.event('message_stop', { type: 'message_stop' });
    this.res.end();
  }

  private delta(partial: string): Promise<void> {
    return this.event('content_block_delta', { type: 'content_block_delta', index: this.index, delta: { type: 'input_json_delta', partial_json: partial } });
  }

  private closeBlock(): void {
    if (this.openBlock === null) return;
    this.event('content_block_stop', { type: 'content_block_stop', index: this.index });
    this.openBlock = null;
  }

  private event(name: string, data: unknown): Promise<void> {
    if (this.res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`) || this.res.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }
}

function sendError(res: ServerResponse, status: number, message: string, retryAfter?: string): void {
  res.writeHead(status, { 'content-type': 'application/json', ...(retryAfter ? { 'retry-after': retryAfter } : {}) });
  res.end(JSON.stringify({ type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message }, request_id: 'req_scripted' }));
}

const blocksOf = (message: AnthropicMessage): ContentBlock[] => (typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content);

/** The key a request carries: `x-api-key`, or `Authorization: Bearer` (which newer SDKs send). */
export function apiKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const key = headers['x-api-key'];
  if (typeof key === 'string' && key !== '') return key;
  return /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
}

/** Why the Messages API would refuse this request, or null. */
function requestProblem({ headers, body }: RecordedAnthropicRequest): string | null {
  if (!apiKeyOf(headers)) return 'x-api-key header is required';
  if (!headers['anthropic-version']) return 'anthropic-version header is required';
  if (body.stream !== true) return 'this server only streams';
  if (typeof body.model !== 'string' || body.model === '') return 'model: Field required';
  if (!Number.isInteger(body.max_tokens) || body.max_tokens! < 1) return 'max_tokens: Field required';
  for (const tool of body.tools ?? []) {
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) return `tools: name ${JSON.stringify(tool.name)} does not match ^[a-zA-Z0-9_-]{1,64}$`;
    if (tool.input_schema?.type !== 'object') return `tools.${tool.name}.input_schema.type: must be "object"`;
  }
  const messages = body.messages ?? [];
  if (messages.length === 0) return 'messages: at least one message is required';
  let previousUses: string[] = [];
  for (const [i, message] of messages.entries()) {
    const expected = i % 2 === 0 ? 'user' : 'assistant';
    if (message.role !== expected) return `messages.${i}.role: roles must alternate between "user" and "assistant", starting with "user" (got "${message.role}")`;
    const blocks = blocksOf(message);
    if (blocks.length === 0) return `messages.${i}: content must not be empty`;
    if (blocks.some((b) => b.type === 'text' && !b.text)) return `messages.${i}: text content blocks must be non-empty`;
    const results = blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id!);
    if (message.role === 'assistant') {
      if (results.length > 0) return `messages.${i}: tool_result blocks belong in user turns`;
      previousUses = blocks.filter((b) => b.type === 'tool_use').map((b) => b.id!);
      continue;
    }
    const leading = blocks.findIndex((b) => b.type !== 'tool_result');
    if (leading >= 0 && blocks.slice(leading).some((b) => b.type === 'tool_result')) return `messages.${i}: tool_result blocks must come first`;
    const unanswered = previousUses.filter((id) => !results.includes(id));
    if (unanswered.length > 0) return `messages.${i}: tool_use ids were found without tool_result blocks immediately after: ${unanswered.join(', ')}`;
    const stray = results.filter((id) => !previousUses.includes(id));
    if (stray.length > 0) return `messages.${i}: unexpected tool_use_id found in tool_result blocks: ${stray.join(', ')}`;
    previousUses = [];
  }
  if (messages.at(-1)!.role !== 'user') return 'the last message must be a user turn';
  return null;
}

/** The text of the last user turn that asked something (not one of tool results only). */
function lastQuestion(req: RecordedAnthropicRequest): string {
  const asking = [...(req.body.messages ?? [])].reverse().find((m) => m.role === 'user' && blocksOf(m).some((b) => b.type === 'text'));
  return asking ? blocksOf(asking).flatMap((b) => (b.type === 'text' ? [b.text ?? ''] : [])).join('\n') : '';
}

const FIXED_ANSWER = ['Hello', ' from', ' the scripted', ' Anthropic server.'];

/** The script that reads the directives documented at the top of this file. */
export function defaultAnthropicScript(req: RecordedAnthropicRequest): AnthropicStep[] {
  const text = lastQuestion(req);
  const number = (name: string) => {
    const match = new RegExp(`\\[\\[\\s*${name}\\s*:\\s*(\\d+)\\s*\\]\\]`, 'i').exec(text);
    return match ? Number(match[1]) : undefined;
  };
  const flag = (name: string) => new RegExp(`\\[\\[\\s*${name}\\s*\\]\\]`, 'i').test(text);
  const steps: AnthropicStep[] = [];
  const delay = number('delay');
  if (delay !== undefined) steps.push({ delayMs: delay });
  const slow = number('slow');
  if (slow !== undefined) steps.push({ chunkIntervalMs: slow });
  const status = number('error');
  if (status !== undefined) return [...steps, { httpError: status }];

  const messages = req.body.messages ?? [];
  const last = messages.at(-1);
  const results = last ? blocksOf(last).filter((b) => b.type === 'tool_result') : [];
  const tools = parseToolDirectives(text);
  const chunks = number('chunks');
  if (results.length > 0) {
    const uses = messages.flatMap((m) => (m.role === 'assistant' ? blocksOf(m) : [])).filter((b) => b.type === 'tool_use');
    for (const result of results) {
      const name = uses.find((u) => u.id === result.tool_use_id)?.name ?? 'tool';
      const content = typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
      steps.push({ text: `Tool ${name} returned: ` }, { text: `${content.slice(0, 500)} ` });
    }
    return steps;
  }
  for (let i = 0; i < (chunks ?? 0); i++) steps.push({ text: `tok${i} ` });
  if (tools.length > 0) steps.push(...tools.map(({ name, arguments: input }) => ({ toolUse: { name, input } })));
  else if (chunks === undefined && !flag('hang')) steps.push(...FIXED_ANSWER.map((part) => ({ text: part })));
  if (flag('hang')) steps.push({ hang: true });
  else if (flag('drop')) steps.push({ dropConnection: true });
  return steps;
}
