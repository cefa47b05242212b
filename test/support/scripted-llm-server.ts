/**
 * An OpenAI-compatible chat-completions server for tests and benchmarks.
 *
 * It answers `POST …/chat/completions` over real Server-Sent Events
 * (`data: {chat.completion.chunk}\n\n` … `data: [DONE]\n\n`), so the official `openai` client runs
 * unmodified against it, in this process or in another one (point `OPENAI_BASE_URL` at `baseUrl`).
 * It listens on loopback only.
 *
 * ## Directives (the default script)
 *
 * Tests in other processes steer the server only through the conversation, so the default script
 * reads directives from the **last user message** (case-insensitive, spaces allowed inside the
 * brackets, anywhere in the text, combinable):
 *
 * | directive              | effect                                                                               |
 * |------------------------|--------------------------------------------------------------------------------------|
 * | `[[chunks:N]]`         | stream N text chunks `tok0 `, `tok1 `, … instead of the short fixed answer            |
 * | `[[tool:NAME {json}]]` | answer with a native tool call to NAME (arguments = the JSON object, `{}` if absent; |
 * |                        | text that is not valid JSON is sent verbatim as the arguments string). Several       |
 * |                        | directives make parallel calls. Once the last message is a tool result, the answer   |
 * |                        | is plain text instead: `Tool NAME returned: <result>`. With `[[chunks:N]]`, the N    |
 * |                        | text chunks come before the calls                                                    |
 * | `[[hang]]`             | after the text (none unless `[[chunks:N]]`), keep the stream open, silent, forever   |
 * | `[[pad:N]]`            | with `[[chunks:N]]`, pad each text chunk to N characters with dots                   |
 * | `[[slow:MS]]`          | wait MS between chunks of this stream (overrides `chunkIntervalMs`)                  |
 * | `[[delay:MS]]`         | wait MS before the response starts (time to first token)                             |
 * | `[[stamp]]`            | prefix every text chunk with its write time: `⟨t=1712345678901.234⟩tok0 `            |
 * | `[[error:STATUS]]`     | answer HTTP STATUS with an OpenAI-style JSON error body                               |
 * | `[[drop]]`             | send the text, then destroy the connection without finishing the stream             |
 * | `[[raw:BASE64URL]]`    | stream the chunks of a JSON array verbatim (see {@link rawDirective}); after tool     |
 * |                        | results, summarise them like `[[tool:...]]`                                          |
 * | `[[no_usage]]`         | report no token usage for this answer (as a provider that does not), see below       |
 * | `[[cached:N]]`         | report N of the prompt tokens as read from the prompt cache (`cached_tokens`)        |
 *
 * Without a directive the answer is `Hello from the scripted LLM server.` in four chunks.
 *
 * ## Usage
 *
 * Every finished answer reports token usage, as OpenAI does: in the JSON body, and for a stream
 * that asked with `stream_options.include_usage` in a last chunk with no choices. The figures
 * are real counts under js-tiktoken's o200k_base: `prompt_tokens` over the messages as OpenAI
 * frames them (3 to prime the answer, and per message 3 plus its content, name and tool calls;
 * the tools offered are not counted), `completion_tokens` the tokens of what was sent (text, and
 * each tool call's name and arguments). They are kept on the request as {@link RecordedRequest.usage}.
 * With `fixedUsage`, the old made-up figures instead (`prompt_tokens` 1000 + 7 per message,
 * `completion_tokens` 100 + 1 per text chunk or tool call), for specs that check a provider
 * client passes figures through unchanged.
 * `[[no_usage]]` (or a `{ noUsage: true }` step) leaves usage out of that answer: no usage chunk,
 * no `usage` in the body, and none recorded; `[[cached:N]]` (or `{ cachedTokens: N }`) adds
 * `prompt_tokens_details.cached_tokens: N`. Both directives hold for every answer of the turn.
 *
 * ## max_tokens
 *
 * A request's `max_completion_tokens` (or else `max_tokens`) caps the answer as a model's does:
 * the text is cut at that many output tokens (a chunk that would pass it is sent up to the
 * limit), a tool call that does not fit is not sent, and the answer finishes with
 * `finish_reason: "length"`.
 *
 * `[[stamp]]` times are `performance.timeOrigin + performance.now()` (epoch ms, 3 decimals) taken
 * just before the chunk is written, so a client computes its receive latency as
 * `performance.timeOrigin + performance.now() - t`.
 *
 * ## Standalone
 *
 * `node dist/test/support/scripted-llm-server.js --port 0 [--chunk-interval-ms N]` prints one line
 * `{"baseUrl":"http://127.0.0.1:PORT/v1"}` and serves until SIGTERM or SIGINT.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { Tiktoken } from 'js-tiktoken/lite';
import { tokenCount } from '#core/usage/token-estimate.js';

/** One thing the server does while answering a request, in order. */
export type ScriptStep =
  /** A text chunk; with `stamp`, prefixed with `⟨t=<write time>⟩`. */
  | { text: string; stamp?: boolean }
  /** A native tool call, streamed as a header delta and then its arguments in several pieces. */
  | { toolCall: { name: string; arguments: Record<string, unknown> | string; id?: string } }
  | { delayMs: number }
  /** Pause between later chunks of this stream (replaces the server's `chunkIntervalMs`). */
  | { chunkIntervalMs: number }
  /** Stay silent with the stream open until the client leaves or the server stops. */
  | { hang: true }
  /** Stay silent with the stream open until `until` settles (the test says when), then go on. */
  | { until: Promise<unknown> }
  /** HTTP error before the stream starts, or an SSE `error` event if it already has. */
  | { httpError: number; message?: string }
  /** Destroy the socket without finishing the response. */
  | { dropConnection: true }
  /** Finish without reporting token usage (wherever in the script it stands). */
  | { noUsage: true }
  /** Report this many of the prompt tokens as cached (wherever in the script it stands). */
  | { cachedTokens: number };

/** The request body fields the server looks at (OpenAI wire format). */
export interface WireMessage {
  role: string;
  content?: string | Array<{ type: string; text?: string }> | null;
  name?: string;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
}

/** A chat request as received; `headers` are verbatim (the bearer key included): never log them. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: {
    model?: string;
    messages?: WireMessage[];
    tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
    stream?: boolean;
    [key: string]: unknown;
  };
  /** Epoch ms. */
  receivedAt: number;
  /** The usage the answer reported, once it finished. */
  usage?: WireUsage;
}

/** OpenAI's `usage` of a completion. */
export interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

export interface ScriptedLlmOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: '127.0.0.1';
  /** Pause between chunks of every stream, by timer. Default 0. */
  chunkIntervalMs?: number;
  /** Decides each answer; default {@link defaultScript}. */
  script?: (req: RecordedRequest) => ScriptStep[];
  /** Requests kept in `requests` (oldest dropped first). Default 10 000. */
  recordLimit?: number;
  /**
   * Report the old made-up figures instead of token counts: `prompt_tokens` 1000 + 7 per
   * message, `completion_tokens` 100 + 1 per text chunk or tool call (max_tokens still cuts).
   */
  fixedUsage?: boolean;
}

/** An OpenAI-compatible streaming server on loopback that plays scripted answers. */
export class ScriptedLlmServer {
  /** Chat requests received, oldest first (bounded by `recordLimit`). */
  requests: RecordedRequest[] = [];
  /** Chat responses currently open. */
  openStreams = 0;
  /** Chat responses the client abandoned before they finished. */
  abortedStreams = 0;

  private script: (req: RecordedRequest) => ScriptStep[];
  private readonly active = new Set<AbortController>();
  private idleWaiters: Array<() => void> = [];
  private requestWaiters: Array<(req: RecordedRequest) => void> = [];
  private nextId = 0;
  private stopping = false;

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
    private readonly options: ScriptedLlmOptions,
  ) {
    this.script = options.script ?? defaultScript;
  }

  /** Starts listening; resolves once the port is bound. */
  static async start(opts: ScriptedLlmOptions = {}): Promise<ScriptedLlmServer> {
    const host = opts.host ?? '127.0.0.1';
    // The tokenizer loads while the system starts, not on the first answer.
    void o200k().catch(() => undefined);
    let instance: ScriptedLlmServer | undefined;
    const server = createServer({ noDelay: true, keepAlive: true }, (req, res) => {
      instance!.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `scripted server failed: ${String(err)}`, type: 'server_error' } }));
      });
    });
    server.listen(opts.port ?? 0, host);
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    instance = new ScriptedLlmServer(server, `http://${host}:${port}/v1`, opts);
    return instance;
  }

  /** Replaces the script for later requests; without an argument, restores {@link defaultScript}. */
  setScript(fn?: (req: RecordedRequest) => ScriptStep[]): void {
    this.script = fn ?? this.options.script ?? defaultScript;
  }

  /** Resolves when no chat response is open (at once if none is). */
  idle(): Promise<void> {
    if (this.openStreams === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Resolves with the next chat request, as soon as it is recorded (before its answer starts). */
  nextRequest(): Promise<RecordedRequest> {
    return new Promise((resolve) => this.requestWaiters.push(resolve));
  }

  /** Ends every open stream and connection, then closes the listener. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const controller of this.active) controller.abort();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path.endsWith('/models')) {
      return sendJson(res, 200, { object: 'list', data: [{ id: 'scripted', object: 'model', created: 0, owned_by: 'test' }] });
    }
    if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
      return sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' } });
    }
    let body: RecordedRequest['body'];
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return sendJson(res, 400, { error: { message: 'request body is not JSON', type: 'invalid_request_error' } });
    }
    const recorded: RecordedRequest = { method: req.method, path, headers: req.headers, body, receivedAt: Date.now() };
    this.record(recorded);
    const steps = this.script(recorded);
    await this.play(res, recorded, steps);
  }

  private record(request: RecordedRequest): void {
    this.requests.push(request);
    const waiters = this.requestWaiters;
    this.requestWaiters = [];
    for (const resolve of waiters) resolve(request);
    const limit = this.options.recordLimit ?? 10_000;
    if (this.requests.length > limit) this.requests.splice(0, this.requests.length - Math.floor(limit / 2));
  }

  private async play(res: ServerResponse, request: RecordedRequest, steps: ScriptStep[]): Promise<void> {
    const controller = new AbortController();
    const signal = controller.signal;
    let droppedByServer = false;
    this.active.add(controller);
    this.openStreams++;
    res.on('close', () => {
      this.active.delete(controller);
      if (!res.writableFinished && !droppedByServer && !this.stopping) this.abortedStreams++;
      controller.abort();
      if (--this.openStreams === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of waiters) resolve();
      }
    });

    const out = request.body.stream === true
      ? new SseAnswer(res, request.body.model ?? 'scripted', `chatcmpl-${++this.nextId}`, (request.body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true)
      : new JsonAnswer(res, request.body.model ?? 'scripted', `chatcmpl-${++this.nextId}`);
    const encoder = await o200k();
    let prompt = promptTokens(encoder, request.body.messages ?? []);
    const cap = outputCap(request.body);
    let completion = 0;
    let cut = false;
    let interval = this.options.chunkIntervalMs ?? 0;
    let chunksSent = 0;
    const pace = async () => {
      if (chunksSent++ > 0 && interval > 0) await sleep(interval, undefined, { signal });
    };

    try {
      for (const step of steps) {
        if (signal.aborted) return;
        if ('delayMs' in step) {
          await sleep(step.delayMs, undefined, { signal });
        } else if ('chunkIntervalMs' in step) {
          interval = step.chunkIntervalMs;
        } else if ('text' in step) {
          await pace();
          let text = step.stamp ? `⟨t=${(performance.timeOrigin + performance.now()).toFixed(3)}⟩${step.text}` : step.text;
          const counted = tokenCount(encoder, text);
          if (completion + counted > cap) {
            // What fits of this chunk goes out, and the answer ends there, as a model's does at max_tokens.
            text = encoder.decode(encoder.encode(text).slice(0, cap - completion));
            cut = true;
          }
          completion += cut ? cap - completion : counted;
          if (text !== '') await out.text(text);
          if (cut) break;
        } else if ('toolCall' in step) {
          const call = step.toolCall;
          const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
          const tokens = tokenCount(encoder, call.name) + tokenCount(encoder, args);
          if (completion + tokens > cap) {
            cut = true;
            break;
          }
          completion += tokens;
          const id = call.id ?? `call_${this.nextId}_${Math.random().toString(36).slice(2, 10)}`;
          for (const piece of out.toolCall(id, call.name, args)) {
            await pace();
            await piece();
          }
        } else if ('hang' in step) {
          out.open();
          if (!signal.aborted) await once(signal, 'abort');
          return;
        } else if ('until' in step) {
          out.open();
          await new Promise<void>((resolve) => {
            signal.addEventListener('abort', () => resolve(), { once: true });
            step.until.then(() => resolve(), () => resolve());
          });
          if (signal.aborted) return;
        } else if ('httpError' in step) {
          out.error(step.httpError, step.message ?? `scripted error ${step.httpError}`);
          return;
        } else if ('dropConnection' in step) {
          out.open();
          droppedByServer = true;
          // Destroying at once could discard chunks still buffered: flush them, then cut.
          const socket = res.socket;
          if (socket) socket.write('', () => socket.destroy());
          return;
        }
      }
      if (this.options.fixedUsage) [prompt, completion] = [1000 + 7 * (request.body.messages?.length ?? 0), 100 + steps.filter((s) => 'text' in s || 'toolCall' in s).length];
      const cached = steps.find((s): s is { cachedTokens: number } => 'cachedTokens' in s)?.cachedTokens;
      if (!steps.some((s) => 'noUsage' in s)) request.usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, ...(cached !== undefined ? { prompt_tokens_details: { cached_tokens: Math.min(cached, prompt) } } : {}) };
      out.finish(request.usage, cut ? 'length' : undefined);
    } catch (err) {
      if (signal.aborted) return; // the client left or the server stopped: nothing to answer
      throw err;
    }
  }
}

/** Writes one streamed completion as SSE chunks. */
class SseAnswer {
  private readonly prefix: string;
  private toolIndex = 0;

  private readonly head: string;

  constructor(
    private readonly res: ServerResponse,
    model: string,
    id: string,
    private readonly includeUsage = false,
  ) {
    this.head = `data: {"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${Math.floor(Date.now() / 1000)},"model":${JSON.stringify(model)},`;
    this.prefix = `${this.head}"choices":[{"index":0,"delta":`;
  }

  /** Sends the headers and the role chunk, once. */
  open(): void {
    if (this.res.headersSent) return;
    this.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    this.res.write(`${this.prefix}{"role":"assistant","content":""},"finish_reason":null}]}\n\n`);
  }

  text(content: string): Promise<void> {
    this.open();
    return this.write(`${this.prefix}{"content":${JSON.stringify(content)}},"finish_reason":null}]}\n\n`);
  }

  /** The call's chunks, each sent when invoked: id and name first, then the arguments in up to four pieces. */
  toolCall(id: string, name: string, args: string): Array<() => Promise<void>> {
    const index = this.toolIndex++;
    const delta = (call: object) => `${this.prefix}{"tool_calls":[${JSON.stringify({ index, ...call })}]},"finish_reason":null}]}\n\n`;
    const pieces: Array<() => Promise<void>> = [
      () => {
        this.open();
        return this.write(delta({ id, type: 'function', function: { name, arguments: '' } }));
      },
    ];
    const size = Math.max(1, Math.ceil(args.length / 4));
    for (let at = 0; at < args.length; at += size) {
      const part = args.slice(at, at + size);
      pieces.push(() => this.write(delta({ function: { arguments: part } })));
    }
    return pieces;
  }

  error(status: number, message: string): void {
    if (!this.res.headersSent) return sendJson(this.res, status, errorBody(status, message));
    this.res.end(`data: ${JSON.stringify(errorBody(status, message))}\n\n`);
  }

  finish(usage: WireUsage | undefined, cutReason?: 'length'): void {
    this.open();
    const reason = cutReason ?? (this.toolIndex > 0 ? 'tool_calls' : 'stop');
    const usageChunk = this.includeUsage && usage ? `${this.head}"choices":[],"usage":${JSON.stringify(usage)}}\n\n` : '';
    this.res.end(`${this.prefix}{},"finish_reason":"${reason}"}]}\n\n${usageChunk}data: [DONE]\n\n`);
  }

  private write(data: string): Promise<void> {
    if (this.res.write(data) || this.res.destroyed) return Promise.resolve();
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

/** Collects a completion and sends it as one JSON body, for `stream: false` requests. */
class JsonAnswer {
  private content = '';
  private readonly calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly model: string,
    private readonly id: string,
  ) {}

  open(): void {}

  text(content: string): Promise<void> {
    this.content += content;
    return Promise.resolve();
  }

  toolCall(id: string, name: string, args: string): Array<() => Promise<void>> {
    this.calls.push({ id, type: 'function', function: { name, arguments: args } });
    return [];
  }

  error(status: number, message: string): void {
    sendJson(this.res, status, errorBody(status, message));
  }

  finish(usage: WireUsage | undefined, cutReason?: 'length'): void {
    const message = { role: 'assistant', content: this.content || null, ...(this.calls.length ? { tool_calls: this.calls } : {}) };
    sendJson(this.res, 200, {
      id: this.id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: this.model,
      choices: [{ index: 0, message, finish_reason: cutReason ?? (this.calls.length ? 'tool_calls' : 'stop'), logprobs: null }],
      ...(usage ? { usage } : {}),
    });
  }
}

let encoderLoad: Promise<Tiktoken> | undefined;

/** o200k_base, loaded once per process as the first server starts (its ranks are a few megabytes). */
function o200k(): Promise<Tiktoken> {
  encoderLoad ??= import('js-tiktoken/ranks/o200k_base').then((ranks) => new Tiktoken(ranks.default));
  return encoderLoad;
}

/** Tokens OpenAI adds per message, and to prime the answer. */
const PER_MESSAGE = 3;
const PRIMING = 3;

/** The prompt's tokens over its messages, framed as OpenAI counts them. */
function promptTokens(encoder: Tiktoken, messages: WireMessage[]): number {
  let total = PRIMING;
  for (const message of messages) {
    total += PER_MESSAGE + tokenCount(encoder, contentText(message.content));
    if (message.name) total += tokenCount(encoder, message.name);
    if (message.tool_calls?.length) total += tokenCount(encoder, JSON.stringify(message.tool_calls));
  }
  return total;
}

/** The most output tokens the request allows: `max_completion_tokens`, else `max_tokens`, else no cap. */
function outputCap(body: RecordedRequest['body']): number {
  const cap = [body.max_completion_tokens, body.max_tokens].find((v): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0);
  return cap ?? Number.POSITIVE_INFINITY;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function errorBody(status: number, message: string) {
  return { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } };
}

/** The text of the last user message of a request ('' if none). */
export function lastUserText(req: RecordedRequest): string {
  const messages = req.body.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'user') return contentText(messages[i].content);
  }
  return '';
}

function contentText(content: WireMessage['content']): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => part.text ?? '').join('');
  return '';
}

const FIXED_ANSWER = ['Hello', ' from', ' the scripted', ' LLM server.'];

/** The script that reads the directives documented at the top of this file. */
export function defaultScript(req: RecordedRequest): ScriptStep[] {
  const text = lastUserText(req);
  const number = (name: string): number | undefined => {
    const match = new RegExp(`\\[\\[\\s*${name}\\s*:\\s*(\\d+)\\s*\\]\\]`, 'i').exec(text);
    return match ? Number(match[1]) : undefined;
  };
  const flag = (name: string) => new RegExp(`\\[\\[\\s*${name}\\s*\\]\\]`, 'i').test(text);

  const steps: ScriptStep[] = [];
  const delay = number('delay');
  if (delay !== undefined) steps.push({ delayMs: delay });
  const slow = number('slow');
  if (slow !== undefined) steps.push({ chunkIntervalMs: slow });
  const status = number('error');
  if (status !== undefined) return [...steps, { httpError: status, message: `scripted error ${status}` }];

  const stamp = flag('stamp');
  const tools = parseToolDirectives(text);
  const raw = rawChunks(text);
  const messages = req.body.messages ?? [];
  const chunks = number('chunks');
  if ((tools.length > 0 || raw) && messages.at(-1)?.role !== 'tool') {
    for (let i = 0; i < (chunks ?? 0); i++) steps.push({ text: `tok${i} `, stamp });
    for (const chunk of raw ?? []) steps.push({ text: chunk });
    steps.push(...tools.map((toolCall) => ({ toolCall })));
  } else if (tools.length > 0 || raw) {
    const results: WireMessage[] = [];
    for (let i = messages.length - 1; i >= 0 && messages[i].role === 'tool'; i--) results.unshift(messages[i]);
    for (const result of results) {
      const name = result.name ?? toolNameFor(messages, result.tool_call_id) ?? 'tool';
      steps.push({ text: `Tool ${name} returned: `, stamp }, { text: contentText(result.content).slice(0, 500) + ' ', stamp });
    }
  } else if (chunks !== undefined) {
    // [[pad:N]] pads each chunk to N characters, for tests that need volume rather than count.
    const pad = number('pad') ?? 0;
    for (let i = 0; i < chunks; i++) steps.push({ text: `tok${i} `.padEnd(pad, '.'), stamp });
  } else if (!flag('hang')) {
    steps.push(...FIXED_ANSWER.map((part) => ({ text: part, stamp })));
  }
  if (flag('no_usage')) steps.push({ noUsage: true });
  const cached = number('cached');
  if (cached !== undefined) steps.push({ cachedTokens: cached });
  if (flag('hang')) steps.push({ hang: true });
  else if (flag('drop')) steps.push({ dropConnection: true });
  return steps;
}

/**
 * `[[raw:BASE64URL]]` carries a JSON array of text chunks streamed verbatim (tool-call tags,
 * JSON replies); build it with {@link rawDirective}. Once the last message is a tool result
 * the answer summarises the results instead, as with `[[tool:...]]`.
 */
export function rawDirective(chunks: string[]): string {
  return `[[raw:${Buffer.from(JSON.stringify(chunks)).toString('base64url')}]]`;
}

function rawChunks(text: string): string[] | undefined {
  const match = /\[\[raw:([A-Za-z0-9_-]+)\]\]/.exec(text);
  if (!match) return undefined;
  const parsed = JSON.parse(Buffer.from(match[1], 'base64url').toString('utf8')) as unknown;
  return Array.isArray(parsed) ? parsed.map(String) : undefined;
}

function toolNameFor(messages: WireMessage[], callId: string | undefined): string | undefined {
  for (const message of messages) {
    const call = message.tool_calls?.find((c) => c.id === callId);
    if (call) return call.function.name;
  }
  return undefined;
}

/** Finds `[[tool:NAME {json}]]` directives; the JSON object may contain brackets and braces. */
export function parseToolDirectives(text: string): Array<{ name: string; arguments: Record<string, unknown> | string }> {
  const found: Array<{ name: string; arguments: Record<string, unknown> | string }> = [];
  const head = /\[\[\s*tool\s*:\s*([A-Za-z0-9_.:-]+)\s*/gi;
  let match: RegExpExecArray | null;
  while ((match = head.exec(text))) {
    let at = head.lastIndex;
    let args: Record<string, unknown> | string = {};
    if (text[at] === '{') {
      const end = matchingBrace(text, at);
      const raw = text.slice(at, end);
      try {
        const parsed: unknown = JSON.parse(raw);
        args = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : raw;
      } catch {
        args = raw;
      }
      at = end;
    }
    found.push({ name: match[1], arguments: args });
    head.lastIndex = at;
  }
  return found;
}

/** Index just past the `}` closing the `{` at `start` (strings respected); the text's end if unclosed. */
function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i + 1;
  }
  const close = text.indexOf(']]', start);
  return close >= 0 ? close : text.length;
}

async function main(argv: string[]): Promise<void> {
  const arg = (name: string) => {
    const i = argv.indexOf(name);
    if (i >= 0) return argv[i + 1];
    return argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
  };
  const server = await ScriptedLlmServer.start({
    port: Number(arg('--port') ?? 0),
    chunkIntervalMs: Number(arg('--chunk-interval-ms') ?? 0),
  });
  process.stdout.write(JSON.stringify({ baseUrl: server.baseUrl }) + '\n');
  const shutdown = () => void server.stop().then(() => process.exit(0));
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`scripted-llm-server: ${String(err)}\n`);
    process.exit(1);
  });
}
