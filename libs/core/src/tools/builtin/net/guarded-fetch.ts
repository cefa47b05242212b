import type { LookupAddress, LookupOneOptions } from 'node:dns';
import { Agent, buildConnector, fetch, type Response } from 'undici';
import { checkOutboundUrl, toAllowRules, type OutboundCheck, type OutboundPolicy } from './outbound-guard.js';

export interface GuardedFetchOptions extends OutboundPolicy {
  /** Largest response body accepted, after decompression. Default 5 MiB. */
  maxBytes?: number;
  /** Deadline for the whole exchange, redirects included. Default 30 s. */
  timeoutMs?: number;
  /** Redirect hops followed (each one checked again). Default 5. */
  maxRedirects?: number;
}

export interface GuardedRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

export interface GuardedResponse {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: Uint8Array;
  redirects: number;
  /** The body decoded with the charset the server named (UTF-8 otherwise). */
  text(): string;
}

export type OutboundErrorCode = 'refused' | 'too_large' | 'timeout' | 'too_many_redirects' | 'aborted' | 'network';

export class OutboundRequestError extends Error {
  constructor(readonly code: OutboundErrorCode, message: string) {
    super(message);
    this.name = 'OutboundRequestError';
  }
}

export const GUARDED_FETCH_DEFAULTS = { maxBytes: 5 * 1024 * 1024, timeoutMs: 30_000, maxRedirects: 5 } as const;

/**
 * The only request headers a redirect to another origin keeps. An allowlist, not a list of
 * credential headers to strip: credentials travel under names no list can know in advance
 * (x-api-key, api-key, x-auth-token, private-token, x-goog-api-key, vendor-specific ones), and a
 * denylist lets every name it misses through to whatever host the redirect names. What is
 * dropped here costs at most a less tailored request to the new origin; what leaks is a secret.
 */
const CROSS_ORIGIN_HEADERS = new Set(['accept', 'accept-encoding', 'accept-language', 'cache-control', 'content-language', 'content-type', 'pragma', 'user-agent']);

/**
 * fetch for URLs chosen by a model: every hop (the first request and each redirect) passes
 * {@link checkOutboundUrl}, and the connection is pinned to the address that check approved,
 * through a lookup hook on the socket, so a DNS answer that changes between the check and the
 * connect (DNS rebinding) cannot steer it to an internal address. Each DNS lookup is bounded
 * by `lookupTimeoutMs` and by the request's deadline and signal. A redirect to another origin
 * carries only benign headers (see CROSS_ORIGIN_HEADERS). Bodies are streamed and the request
 * is aborted as soon as they pass `maxBytes`.
 * @throws OutboundRequestError with code refused, too_large, timeout, too_many_redirects,
 * aborted or network.
 */
export async function guardedFetch(url: string | URL, init: GuardedRequestInit = {}, options: GuardedFetchOptions = {}): Promise<GuardedResponse> {
  const maxBytes = options.maxBytes ?? GUARDED_FETCH_DEFAULTS.maxBytes;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? GUARDED_FETCH_DEFAULTS.timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  const policy: OutboundPolicy = { ...options, allowlist: toAllowRules(options.allowlist) };
  const hop = await fetchCheckedHops(url, { ...init, signal }, {
    check: (next) => checkOutboundUrl(next, policy, signal),
    maxRedirects: options.maxRedirects ?? GUARDED_FETCH_DEFAULTS.maxRedirects,
    timeout,
  });
  try {
    const bytes = await readCapped(hop.response, maxBytes, signal, timeout);
    const responseHeaders: Record<string, string> = {};
    hop.response.headers.forEach((value, name) => (responseHeaders[name] = value));
    return {
      url: hop.url.href,
      status: hop.response.status,
      statusText: hop.response.statusText,
      headers: responseHeaders,
      body: bytes,
      redirects: hop.redirects,
      text: () => decode(bytes, responseHeaders['content-type']),
    };
  } finally {
    hop.release();
  }
}

/** A request body that can be sent again when a 307 or 308 redirect asks for it. */
export type ReplayableBody = string | Uint8Array | URLSearchParams;

export interface CheckedHopsInit {
  method?: string;
  headers?: Record<string, string>;
  body?: ReplayableBody;
  signal?: AbortSignal;
}

export interface CheckedHopsOptions {
  /** The outbound policy for one hop: the address to pin, or why not (see {@link checkOutboundUrl}). */
  check: (url: string) => Promise<OutboundCheck>;
  /** Redirect hops followed, each one checked again. */
  maxRedirects: number;
  /** The request's own deadline, when it has one: failures it caused are reported as timeouts. */
  timeout?: AbortSignal;
}

/** The last hop's answer, its body unread: `release` closes its sockets once the body is read. */
export interface CheckedHops {
  response: Response;
  /** The URL that answered, after redirects. */
  url: URL;
  redirects: number;
  release(): void;
}

/**
 * The outbound policy on every hop of one request: the first URL and each redirect's target pass
 * `check`, each hop's sockets connect only to the origin and address its check approved (see
 * {@link pinnedAgent}), redirects are followed by hand up to `maxRedirects`, and a redirect to
 * another origin carries only benign headers (see CROSS_ORIGIN_HEADERS). The one way DataAgent
 * itself follows a redirect it did not choose: `guardedFetch` (fetch_url, http_request) and the
 * MCP sign-in's fetches (discovery, registration, tokens) both go through it.
 * @throws OutboundRequestError with code refused, timeout, too_many_redirects, aborted or network.
 */
export async function fetchCheckedHops(url: string | URL, init: CheckedHopsInit, options: CheckedHopsOptions): Promise<CheckedHops> {
  const { signal } = init;
  const { timeout } = options;
  let current = String(url);
  let method = (init.method ?? 'GET').toUpperCase();
  let body = init.body;
  const headers = { ...(init.headers ?? {}) };

  for (let redirects = 0; ; redirects++) {
    const check = await options.check(current);
    if (!check.ok) throw checkFailure(check.reason, check.interrupted, timeout);
    const dispatcher = pinnedAgent(check, 1);
    const release = () => void dispatcher.destroy().catch(() => undefined);
    try {
      const response = await fetch(check.url, { method, headers, body, redirect: 'manual', signal, dispatcher }).catch((err: unknown) => {
        throw translate(err, signal, timeout);
      });
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel().catch(() => undefined);
        release();
        if (redirects >= options.maxRedirects) throw new OutboundRequestError('too_many_redirects', `More than ${options.maxRedirects} redirects`);
        const next = new URL(location, check.url);
        if (next.origin !== check.url.origin) for (const name of Object.keys(headers)) if (!CROSS_ORIGIN_HEADERS.has(name.toLowerCase())) delete headers[name];
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
          if (method !== 'HEAD') method = 'GET';
          body = undefined;
          for (const name of Object.keys(headers)) if (/^content-/i.test(name)) delete headers[name];
        }
        current = next.href;
        continue;
      }
      return { response, url: check.url, redirects, release };
    } catch (err) {
      release();
      throw err;
    }
  }
}

/** Where a pinned agent may connect: the URL the outbound check approved, and the address it approved for it. */
export interface PinnedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

/**
 * An undici agent whose sockets connect only to the approved origin (scheme, host and port of
 * `target.url`), at the approved address, whatever DNS says now: its lookup answers that address
 * for the host, while TLS still checks the certificate against the URL's host name. A connection
 * to any other origin fails before a socket opens, so neither a redirect undici follows by itself
 * nor an IP literal (which skips the lookup) nor another port on the same host can reach what the
 * check did not approve. Also used for MCP servers, whose connections must stay where they were checked.
 * @param connections Sockets per origin; unlimited when absent.
 */
export function pinnedAgent(target: PinnedTarget, connections?: number): Agent {
  const { address, family } = target;
  const lookup = (_host: string, opts: LookupOneOptions & { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address, family } satisfies LookupAddress]);
    else cb(null, address, family);
  };
  const approved = { protocol: target.url.protocol, hostname: target.url.hostname, port: portOf(target.url.protocol, target.url.port) };
  const connectPinned = buildConnector({ lookup } as never);
  const connect: buildConnector.connector = (opts, callback) => {
    if (opts.protocol !== approved.protocol || opts.hostname !== approved.hostname || portOf(opts.protocol, opts.port) !== approved.port) {
      const error = new Error(`${opts.protocol}//${opts.hostname}:${portOf(opts.protocol, opts.port)} is not the checked destination ${approved.hostname}:${approved.port}`);
      queueMicrotask(() => callback(error, null));
      return;
    }
    connectPinned(opts, callback);
  };
  return new Agent({ connect, ...(connections === undefined ? {} : { connections }) });
}

function portOf(protocol: string, port: string | undefined): string {
  return port || (protocol === 'https:' ? '443' : '80');
}

async function readCapped(response: Response, maxBytes: number, signal: AbortSignal, timeout: AbortSignal): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new OutboundRequestError('too_large', `Response of ${declared} bytes exceeds the ${maxBytes}-byte limit`);
  }
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new OutboundRequestError('too_large', `Response exceeds the ${maxBytes}-byte limit`);
      }
      chunks.push(value);
    }
  } catch (err) {
    throw translate(err, signal, timeout);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** A failed {@link checkOutboundUrl} as an error: refused, or cut short by DNS, the deadline or a cancel. */
function checkFailure(reason: string, interrupted: 'timeout' | 'aborted' | undefined, timeout: AbortSignal | undefined): OutboundRequestError {
  if (interrupted === 'timeout' || (interrupted === 'aborted' && timeout?.aborted)) return new OutboundRequestError('timeout', `Request timed out: ${reason}`);
  if (interrupted === 'aborted') return new OutboundRequestError('aborted', `Request aborted: ${reason}`);
  return new OutboundRequestError('refused', `Request refused: ${reason}`);
}

function translate(err: unknown, signal: AbortSignal | undefined, timeout: AbortSignal | undefined): OutboundRequestError {
  if (err instanceof OutboundRequestError) return err;
  if (timeout?.aborted) return new OutboundRequestError('timeout', 'Request timed out');
  if (signal?.aborted) return new OutboundRequestError('aborted', 'Request aborted');
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return new OutboundRequestError('network', `Request failed: ${cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err))}`);
}

function decode(bytes: Uint8Array, contentType: string | undefined): string {
  const charset = /charset="?([^";\s]+)/i.exec(contentType ?? '')?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}
