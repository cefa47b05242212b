import type { Tool, ToolResult } from '../tool.js';
import { guardedFetch, OutboundRequestError, type GuardedFetchOptions, type GuardedResponse } from './net/guarded-fetch.js';

export interface HttpToolOptions extends GuardedFetchOptions {
  /** Characters of response text handed back to the model. Default 50,000. */
  maxContentChars?: number;
}

/** A tool whose need for approval depends on the call's arguments. */
export type ArgsSensitiveTool = Tool & Required<Pick<Tool, 'requiresApproval'>>;

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const DROPPED_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'te', 'trailer']);

/**
 * Whether an `http_request` call needs approval: anything but GET and HEAD can change
 * something on the other side. The tool carries it as `requiresApproval`, which the engine
 * consults per call (the static `sensitive` flag cannot see arguments).
 */
export function requiresApproval(args: Record<string, unknown>): boolean {
  const method = typeof args.method === 'string' ? args.method.toUpperCase() : 'GET';
  return method !== 'GET' && method !== 'HEAD';
}

/** The response as the model sees it: status, headers, and the body as JSON or capped text. */
export function describeResponse(res: GuardedResponse, maxChars: number): Record<string, unknown> {
  const type = res.headers['content-type'] ?? '';
  let content: unknown;
  if (res.body.byteLength === 0) {
    content = '';
  } else if (/\bjson\b/i.test(type)) {
    try {
      content = JSON.parse(res.text());
    } catch {
      content = cap(res.text(), maxChars);
    }
  } else if (type === '' || /^(text\/|application\/(xml|xhtml|javascript|x-www-form-urlencoded))|\+xml/i.test(type)) {
    content = cap(res.text(), maxChars);
  } else {
    content = `(${res.body.byteLength} bytes of ${type}, not shown)`;
  }
  return { url: res.url, status_code: res.status, headers: res.headers, content };
}

function cap(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, maxChars)}\n… (${text.length - maxChars} more characters cut)` : text;
}

/** A failed outbound request as a tool result, with its reason code for the model. */
export function outboundFailure(err: unknown): ToolResult {
  if (err instanceof OutboundRequestError) return { success: false, output: { error_code: err.code }, error: err.message };
  return { success: false, output: null, error: err instanceof Error ? err.message : String(err) };
}

/**
 * The `http_request` tool: any method to a public URL (internal addresses
 * only when allowlisted), through {@link guardedFetch}.
 */
export function createHttpRequestTool(options: HttpToolOptions = {}): ArgsSensitiveTool {
  const maxContentChars = options.maxContentChars ?? 50_000;
  return {
    name: 'http_request',
    description: 'Make an HTTP request to a public URL and return status, headers and body (JSON parsed when the response is JSON). Requests other than GET need the user\'s approval.',
    parameters: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'Absolute http(s) URL' },
        method: { type: 'string', enum: [...METHODS, ...METHODS.map((m) => m.toLowerCase())], description: 'Default GET' },
        headers: { type: 'object', additionalProperties: { type: 'string' } },
        body: { description: 'Request body: a string, or a JSON value sent as application/json' },
      },
      required: ['url'],
      additionalProperties: false,
    },
    timeoutMs: (options.timeoutMs ?? 30_000) + 1_000,
    requiresApproval,
    // GET and HEAD only read: after a worker dies mid-call they are sent again; anything else is reported interrupted.
    readOnly: (args) => !requiresApproval(args),
    async execute(args, ctx) {
      const method = typeof args.method === 'string' ? args.method.toUpperCase() : 'GET';
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries((args.headers as Record<string, string> | undefined) ?? {})) {
        if (!DROPPED_HEADERS.has(name.toLowerCase())) headers[name] = String(value);
      }
      let body: string | undefined;
      if (args.body !== undefined && args.body !== null && method !== 'GET' && method !== 'HEAD') {
        if (typeof args.body === 'string') {
          body = args.body;
        } else {
          body = JSON.stringify(args.body);
          if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
        }
      }
      try {
        const res = await guardedFetch(String(args.url), { method, headers, body, signal: ctx.signal }, options);
        const output = describeResponse(res, maxContentChars);
        return res.status < 400 ? { success: true, output } : { success: false, output, error: `HTTP ${res.status} ${res.statusText}`.trim() };
      } catch (err) {
        return outboundFailure(err);
      }
    },
  };
}
