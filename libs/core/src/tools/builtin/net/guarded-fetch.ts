import type { LookupAddress, LookupOneOptions } from 'node:dns';
import { Agent, fetch, type Response } from 'undici';
import { checkOutboundUrl, toAllowRules, type OutboundPolicy } from './outbound-guard.js';

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
  const maxRedirects = options.maxRedirects ?? GUARDED_FETCH_DEFAULTS.maxRedirects;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? GUARDED_FETCH_DEFAULTS.timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  const policy: OutboundPolicy = { ...options, allowlist: toAllowRules(options.allowlist) };

  let current = String(url);
  let method = (init.method ?? 'GET').toUpperCase();
  let body = init.body;
  const headers = { ...(init.headers ?? {}) };

  for (let redirects = 0; ; redirects++) {
    const check = await checkOutboundUrl(current, policy, signal);
    if (!check.ok) throw checkFailure(check.reason, check.interrupted, timeout);
    const dispatcher = pinnedAgent(check.address, check.family, 1);
    try {
      const response = await fetch(check.url, { method, headers, body, redirect: 'manual', signal, dispatcher }).catch((err: unknown) => {
        throw translate(err, signal, timeout);
      });
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel().catch(() => undefined);
        if (redirects >= maxRedirects) throw new OutboundRequestError('too_many_redirects', `More than ${maxRedirects} redirects`);
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
      const bytes = await readCapped(response, maxBytes, signal, timeout);
      const responseHeaders: Record<string, string> = {};
      response.headers.forEach((value, name) => (responseHeaders[name] = value));
      return {
        url: check.url.href,
        status: response.status,
        statusText: response.statusText,
        headers: responseHeaders,
        body: bytes,
        redirects,
        text: () => decode(bytes, responseHeaders['content-type']),
      };
    } finally {
      void dispatcher.destroy().catch(() => undefined);
    }
  }
}

/**
 * An undici agent whose sockets connect only to the approved address, whatever DNS says now: its
 * lookup answers that address for any host, while TLS still checks the certificate against the
 * URL's host name. Also used for MCP servers, whose connections must stay where they were checked.
 * @param connections Sockets per origin; unlimited when absent.
 */
export function pinnedAgent(address: string, family: 4 | 6, connections?: number): Agent {
  const lookup = (_host: string, opts: LookupOneOptions & { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address, family } satisfies LookupAddress]);
    else cb(null, address, family);
  };
  return new Agent({ connect: { lookup } as never, ...(connections === undefined ? {} : { connections }) });
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
function checkFailure(reason: string, interrupted: 'timeout' | 'aborted' | undefined, timeout: AbortSignal): OutboundRequestError {
  if (interrupted === 'timeout' || (interrupted === 'aborted' && timeout.aborted)) return new OutboundRequestError('timeout', `Request timed out: ${reason}`);
  if (interrupted === 'aborted') return new OutboundRequestError('aborted', `Request aborted: ${reason}`);
  return new OutboundRequestError('refused', `Request refused: ${reason}`);
}

function translate(err: unknown, signal: AbortSignal, timeout: AbortSignal): OutboundRequestError {
  if (err instanceof OutboundRequestError) return err;
  if (timeout.aborted) return new OutboundRequestError('timeout', 'Request timed out');
  if (signal.aborted) return new OutboundRequestError('aborted', 'Request aborted');
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
