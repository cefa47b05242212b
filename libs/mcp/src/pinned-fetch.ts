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
