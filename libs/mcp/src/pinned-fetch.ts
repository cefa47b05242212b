import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { fetch as undiciFetch } from 'undici';
import { fetchCheckedHops, GUARDED_FETCH_DEFAULTS, pinnedAgent, type ReplayableBody } from '#core/tools/builtin/net/guarded-fetch.js';

/** The URL the outbound check approved for a server, and the address it approved for it (what `checkOutboundUrl` returns). */
export interface PinnedAddress {
  url: URL;
  address: string;
  family: 4 | 6;
}

export interface PinnedFetch {
  fetch: FetchLike;
  /** Closes its sockets (the connection is over). */
  close(): Promise<void>;
}

/**
 * A fetch whose sockets connect only to `pinned`, however the URL's host resolves later: a remote
 * MCP server's name is resolved once, by the outbound check, and a DNS answer that changes after it
 * (rebinding) cannot steer the connection's later requests, reconnects included, to another
 * address; a redirect to another origin (another host or port) fails before it connects. TLS
 * still verifies the certificate against the host name.
 */
export function pinnedFetch(pinned: PinnedAddress): PinnedFetch {
  const agent = pinnedAgent(pinned);
  return {
    // undici's fetch is the global one with a dispatcher; its types differ from the DOM's only in name.
    fetch: (url, init) => undiciFetch(url, { ...(init as object), dispatcher: agent }) as unknown as Promise<Response>,
    close: () => agent.destroy(),
  };
}

/**
 * A fetch that asks the outbound address policy about every hop of every request (the URL, then
 * each redirect's target, up to `maxRedirects`, followed by hand) and connects only to the origin
 * and address it approved: for the few requests a sign-in makes to an MCP server and its
 * authorization server (challenge, metadata, registration, tokens), whose URLs a server names.
 * The same hop policy as `guardedFetch` (fetch_url), not a second one.
 * @throws OutboundRequestError naming the refusal when the policy refuses a hop.
 */
export function policyFetch(checkUrl: (url: string) => Promise<{ ok: false; reason: string } | ({ ok: true } & PinnedAddress)>, maxRedirects: number = GUARDED_FETCH_DEFAULTS.maxRedirects): FetchLike {
  return async (url, init) => {
    const hop = await fetchCheckedHops(
      String(url),
      { ...(init?.method ? { method: init.method } : {}), headers: Object.fromEntries(new Headers(init?.headers).entries()), ...replayable(init?.body), ...(init?.signal ? { signal: init.signal } : {}) },
      { check: checkUrl, maxRedirects },
    );
    try {
      // Read whole before the sockets close: these answers are small JSON documents.
      const body = await hop.response.arrayBuffer();
      return new Response(body, { status: hop.response.status, statusText: hop.response.statusText, headers: hop.response.headers as unknown as Headers });
    } finally {
      hop.release();
    }
  };
}

/** The sign-in's bodies are JSON text or a form: both can be sent again if a 307 asks. */
function replayable(body: RequestInit['body']): { body?: ReplayableBody } {
  if (body === undefined || body === null) return {};
  if (typeof body === 'string' || body instanceof URLSearchParams || body instanceof Uint8Array) return { body };
  throw new TypeError('policyFetch sends only string, form or byte bodies');
}
