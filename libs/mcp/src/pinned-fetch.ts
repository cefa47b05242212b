import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { fetch as undiciFetch } from 'undici';
import { pinnedAgent } from '#core/tools/builtin/net/guarded-fetch.js';

/** The address the outbound check approved for a server's URL (what `checkOutboundUrl` returns). */
export interface PinnedAddress {
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
 * address. TLS still verifies the certificate against the host name.
 */
export function pinnedFetch(pinned: PinnedAddress): PinnedFetch {
  const agent = pinnedAgent(pinned.address, pinned.family);
  return {
    // undici's fetch is the global one with a dispatcher; its types differ from the DOM's only in name.
    fetch: (url, init) => undiciFetch(url, { ...(init as object), dispatcher: agent }) as unknown as Promise<Response>,
    close: () => agent.destroy(),
  };
}

/**
 * A fetch that asks the outbound address policy about every request's URL and connects only to
 * the address it approved: for the few requests a sign-in makes to an authorization server
 * (metadata, registration, tokens), whose addresses a server's metadata names.
 * @throws Error naming the refusal when the policy refuses a URL.
 */
export function policyFetch(checkUrl: (url: string) => Promise<{ ok: false; reason: string } | ({ ok: true } & PinnedAddress)>): FetchLike {
  return async (url, init) => {
    const check = await checkUrl(String(url));
    if (!check.ok) throw new Error(`${new URL(String(url)).host} is refused: ${check.reason}`);
    const pinned = pinnedFetch(check);
    try {
      const response = await pinned.fetch(url, init);
      // Read whole before the sockets close: these answers are small JSON documents.
      const body = await response.arrayBuffer();
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    } finally {
      await pinned.close();
    }
  };
}
