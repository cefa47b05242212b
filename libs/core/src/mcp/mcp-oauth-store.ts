/**
 * A person's sign-in to one OAuth-protected MCP server: what the worker needs to send
 * `Authorization: Bearer` and to refresh it, without discovering anything again.
 *
 * The shapes are the MCP SDK's (`OAuthDiscoveryState`, `OAuthClientInformationMixed`,
 * `OAuthTokens`), kept as plain JSON here so that stores need no SDK.
 */
export interface McpOAuthGrant {
  /** Where the server's authorization server is, and both metadata documents. */
  discovery: Record<string, unknown>;
  /** The client identity the tokens were issued to: pre-registered, a metadata document URL, or registered. */
  client: { client_id: string; client_secret?: string; issuer?: string } & Record<string, unknown>;
  tokens: { access_token: string; token_type: string; refresh_token?: string; scope?: string; issuer?: string } & Record<string, unknown>;
  /** When the access token expires (ms since the epoch); absent when the server did not say. */
  expiresAt?: number;
}

/** Whose sign-in: a person's, to one of their servers (or a global one they use). */
export interface McpOAuthOwner {
  tenantId: string;
  userId: string;
}

export interface StoredMcpOAuthGrant {
  grant: McpOAuthGrant;
  /** Raised by every write: a refresh writes only over the version it read (a fenced write). */
  version: number;
  updatedAt: Date;
}

/**
 * Sign-ins to MCP servers, per person and server. Tokens and client secrets are stored
 * encrypted by the implementation and come back in clear only from here.
 */
export interface McpOAuthStore {
  get(owner: McpOAuthOwner, server: string): Promise<StoredMcpOAuthGrant | null>;
  /**
   * Writes `grant` when the stored version is still `expectedVersion` (0: no sign-in stored).
   * Versions only grow, across sign-outs too: a refresh that read a grant before a sign-out
   * cannot write over the sign-in that follows.
   * @returns the new version, or null when another writer got there first.
   */
  put(owner: McpOAuthOwner, server: string, grant: McpOAuthGrant, expectedVersion: number): Promise<number | null>;
  /** Forgets the sign-in; false when there was none. */
  delete(owner: McpOAuthOwner, server: string): Promise<boolean>;
}

/** A lock that many workers share: one refresh of one sign-in at a time, cluster-wide. */
export interface RefreshLock {
  /** Takes `key` for `ttlMs`; resolves to its release, or null while another holds it. */
  tryAcquire(key: string, ttlMs: number): Promise<(() => Promise<void>) | null>;
}

/** Sign-ins held in memory: for tests, the conformance driver and single-process demos. */
export class MemoryMcpOAuthStore implements McpOAuthStore {
  /** Signed-out entries stay as a version with no grant. */
  private readonly grants = new Map<string, { grant: McpOAuthGrant | null; version: number; updatedAt: Date }>();

  async get(owner: McpOAuthOwner, server: string): Promise<StoredMcpOAuthGrant | null> {
    const stored = this.grants.get(keyOf(owner, server));
    return stored?.grant ? structuredClone({ ...stored, grant: stored.grant }) : null;
  }

  async put(owner: McpOAuthOwner, server: string, grant: McpOAuthGrant, expectedVersion: number): Promise<number | null> {
    const key = keyOf(owner, server);
    const stored = this.grants.get(key);
    if ((stored?.grant ? stored.version : 0) !== expectedVersion) return null;
    const version = (stored?.version ?? 0) + 1;
    this.grants.set(key, { grant: structuredClone(grant), version, updatedAt: new Date() });
    return version;
  }

  async delete(owner: McpOAuthOwner, server: string): Promise<boolean> {
    const key = keyOf(owner, server);
    const stored = this.grants.get(key);
    if (!stored?.grant) return false;
    this.grants.set(key, { grant: null, version: stored.version + 1, updatedAt: new Date() });
    return true;
  }
}

function keyOf(owner: McpOAuthOwner, server: string): string {
  return JSON.stringify([owner.tenantId, owner.userId, server]);
}
