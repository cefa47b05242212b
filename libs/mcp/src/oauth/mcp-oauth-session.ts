import { extractWWWAuthenticateParams, refreshAuthorization, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { InvalidGrantError, OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpOAuthOwner, McpOAuthStore, RefreshLock, StoredMcpOAuthGrant } from '#core/mcp/mcp-oauth-store.js';
import { McpAuthorizationRequired } from '../mcp-errors.js';
import { grantOf } from './mcp-sign-in.js';

export { McpAuthorizationRequired };
export type { RefreshLock };

/** A lock within one process: for tests and the conformance driver. */
export class MemoryRefreshLock implements RefreshLock {
  private readonly held = new Map<string, number>();

  async tryAcquire(key: string, ttlMs: number): Promise<(() => Promise<void>) | null> {
    const until = this.held.get(key);
    if (until !== undefined && until > Date.now()) return null;
    const mine = Date.now() + ttlMs;
    this.held.set(key, mine);
    return async () => {
      if (this.held.get(key) === mine) this.held.delete(key);
    };
  }
}

export interface McpOAuthSessionOptions {
  owner: McpOAuthOwner;
  server: string;
  store: McpOAuthStore;
  lock: RefreshLock;
  /** The token endpoint is reached through it (the outbound address policy). */
  fetchFn?: FetchLike;
  /** A token this close to its expiry is refreshed before use: 30 s by default, a quarter of a shorter lifetime. */
  refreshSkewMs?: number;
  /** How long a grant read from the store is used before it is read again. Default 5 s. */
  cacheMs?: number;
  /** How long a refresh may hold the lock, and how long others wait for it. Default 15 s. */
  refreshTimeoutMs?: number;
  now?: () => number;
  /** Told of each refresh that reached the authorization server (for logs and metrics). */
  onRefresh?: (outcome: 'refreshed' | 'refused' | 'failed') => void;
  /** Told when this session forgot a sign-in the server no longer takes (every worker should hear of it). */
  onForgotten?: () => void;
}

/**
 * One person's sign-in to one MCP server, as a worker uses it: the bearer token for each
 * request, refreshed before it expires. A refresh is single-flight for the whole cluster: the
 * worker that takes the lock redeems the refresh token and writes the new grant over the
 * version it read (a fenced write); the others wait for that write and use it. A rotated
 * refresh token is thus redeemed once, and a refresh refused with `invalid_grant` forgets the
 * sign-in: the server needs sign-in again.
 */
export class McpOAuthSession {
  private readonly skewMs: number;
  private readonly timeoutMs: number;
  /** The grant last read or written, and when: most requests need no read from the store. */
  private cached?: { stored: StoredMcpOAuthGrant; at: number };

  constructor(private readonly options: McpOAuthSessionOptions) {
    this.skewMs = options.refreshSkewMs ?? 30_000;
    this.timeoutMs = options.refreshTimeoutMs ?? 15_000;
  }

  private get now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /**
   * A current access token, or undefined when nobody has signed in (the server may not need it).
   * @throws McpAuthorizationRequired when the sign-in expired and cannot be refreshed.
   */
  async accessToken(): Promise<string | undefined> {
    const cached = this.cached && this.cached.at + (this.options.cacheMs ?? 5_000) > this.now ? this.cached.stored : undefined;
    if (cached && this.fresh(cached)) return cached.grant.tokens.access_token;
    // Read again before refreshing: another worker may have refreshed it already.
    const stored = await this.load();
    if (!stored) return undefined;
    if (this.fresh(stored)) return stored.grant.tokens.access_token;
    return (await this.refresh(stored)).access_token;
  }

  /** Whether the grant's access token is not near its expiry. */
  private fresh(stored: StoredMcpOAuthGrant): boolean {
    const { expiresAt, tokens } = stored.grant;
    const lifetimeMs = typeof tokens.expires_in === 'number' ? tokens.expires_in * 1000 : Infinity;
    return expiresAt === undefined || expiresAt - Math.min(this.skewMs, lifetimeMs / 4) > this.now;
  }

  private async load(): Promise<StoredMcpOAuthGrant | null> {
    const stored = await this.options.store.get(this.options.owner, this.options.server);
    this.cached = stored ? { stored, at: this.now } : undefined;
    return stored;
  }

  /**
   * The server refused `token` (401; undefined: the request carried none): a token another
   * worker refreshed meanwhile, else a refreshed one, else sign-in.
   * @throws McpAuthorizationRequired
   */
  async afterRefusal(token: string | undefined, challenge: McpAuthorizationRequired['challenge']): Promise<string> {
    const stored = await this.read(challenge);
    if (stored.grant.tokens.access_token !== token) return stored.grant.tokens.access_token;
    if (!stored.grant.tokens.refresh_token) {
      await this.forget(stored);
      throw this.required('the server refused the token and there is no refresh token', challenge);
    }
    return (await this.refresh(stored, challenge)).access_token;
  }

  /** Reads the store again at the next request: a new sign-in is on its way (the server asked for one). */
  invalidate(): void {
    this.cached = undefined;
  }

  /** The server refused even a fresh `token`: the sign-in is of no more use (unless already replaced). */
  async refused(token: string): Promise<void> {
    const stored = await this.options.store.get(this.options.owner, this.options.server);
    if (stored?.grant.tokens.access_token === token) await this.forget(stored);
  }

  /** Forgets a sign-in the server will not take any more (only the version that was refused). */
  async forget(stored: StoredMcpOAuthGrant): Promise<void> {
    this.cached = undefined;
    const current = await this.options.store.get(this.options.owner, this.options.server);
    if (current?.version === stored.version && (await this.options.store.delete(this.options.owner, this.options.server))) this.options.onForgotten?.();
  }

  private async read(challenge: McpAuthorizationRequired['challenge'] = {}): Promise<StoredMcpOAuthGrant> {
    const stored = await this.load();
    if (!stored) throw this.required('nobody has signed in', challenge);
    return stored;
  }

  private async refresh(seen: StoredMcpOAuthGrant, challenge: McpAuthorizationRequired['challenge'] = {}): Promise<OAuthTokens> {
    const { owner, server, store, lock } = this.options;
    const key = JSON.stringify([owner.tenantId, owner.userId, server]);
    const deadline = this.now + this.timeoutMs;
    for (let wait = 20; ; wait = Math.min(wait * 2, 250)) {
      const release = await lock.tryAcquire(key, this.timeoutMs);
      if (release) {
        try {
          const current = await store.get(owner, server);
          if (!current) throw this.required('the sign-in was removed', challenge);
          // Another worker refreshed while this one waited for the lock.
          if (current.version !== seen.version) {
            this.cached = { stored: current, at: this.now };
            return current.grant.tokens;
          }
          return await this.redeem(current, challenge);
        } finally {
          await release().catch(() => undefined);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
      const current = await this.load();
      if (!current) throw this.required('the sign-in was removed', challenge);
      if (current.version !== seen.version) return current.grant.tokens;
      if (this.now > deadline) throw new Error(`MCP server ${server}: another worker's token refresh did not finish within ${this.timeoutMs} ms`);
    }
  }

  /** Redeems the refresh token once, under the lock, and writes the result over the version read. */
  private async redeem(current: StoredMcpOAuthGrant, challenge: McpAuthorizationRequired['challenge']): Promise<OAuthTokens> {
    const { owner, server, store } = this.options;
    const { grant } = current;
    const refreshToken = grant.tokens.refresh_token;
    if (!refreshToken) {
      await this.forget(current);
      throw this.required('the token expired and there is no refresh token', challenge);
    }
    const discovery = grant.discovery as unknown as OAuthDiscoveryState;
    const resource = discovery.resourceMetadata?.resource;
    let tokens: OAuthTokens;
    try {
      tokens = await refreshAuthorization(discovery.authorizationServerUrl, {
        ...(discovery.authorizationServerMetadata ? { metadata: discovery.authorizationServerMetadata } : {}),
        clientInformation: grant.client as OAuthClientInformationMixed,
        refreshToken,
        ...(resource ? { resource: new URL(resource) } : {}),
        ...(this.options.fetchFn ? { fetchFn: this.options.fetchFn } : {}),
      });
    } catch (err) {
      if (err instanceof InvalidGrantError || (err instanceof OAuthError && err.errorCode === 'invalid_grant')) {
        this.options.onRefresh?.('refused');
        await this.forget(current);
        throw this.required('the authorization server refused the refresh token (invalid_grant)', challenge);
      }
      this.options.onRefresh?.('failed');
      throw err;
    }
    this.options.onRefresh?.('refreshed');
    // A server that does not rotate its refresh token keeps the old one valid.
    const next = grantOf(discovery, grant.client as OAuthClientInformationMixed, { ...tokens, refresh_token: tokens.refresh_token ?? refreshToken }, this.now);
    const version = await store.put(owner, server, next, current.version);
    this.cached = version === null ? undefined : { stored: { grant: next, version, updatedAt: new Date(this.now) }, at: this.now };
    if (version === null) {
      // Written under the lock, so only a lock that outlived its hold lands here: use what won.
      const winner = await store.get(owner, server);
      if (!winner) throw this.required('the sign-in was removed', challenge);
      return winner.grant.tokens;
    }
    return next.tokens;
  }

  private required(reason: string, challenge: McpAuthorizationRequired['challenge']): McpAuthorizationRequired {
    return new McpAuthorizationRequired(this.options.server, reason, challenge);
  }
}

/** What a 401 or 403 asks for: its WWW-Authenticate scope and resource metadata URL, and whether it is insufficient_scope. */
export function challengeOf(response: Response): McpAuthorizationRequired['challenge'] & { insufficientScope: boolean } {
  const { scope, resourceMetadataUrl, error } = extractWWWAuthenticateParams(response);
  return {
    ...(scope ? { scope } : {}),
    ...(resourceMetadataUrl ? { resourceMetadataUrl: resourceMetadataUrl.toString() } : {}),
    insufficientScope: error === 'insufficient_scope',
  };
}

/**
 * A fetch for a remote MCP server that signs each request with the person's token (none before
 * anyone signed in: most servers need none): a 401 gets one refreshed token and one more try; a second 401, or a 403 `insufficient_scope`, throws
 * McpAuthorizationRequired with the server's challenge (the next sign-in asks for its scope).
 */
export function oauthFetch(base: FetchLike, session: McpOAuthSession, server: string): FetchLike {
  return async (url, init) => {
    const send = (token: string) => {
      const headers = new Headers(init?.headers);
      headers.set('Authorization', `Bearer ${token}`);
      return base(url, { ...init, headers });
    };
    const token = await session.accessToken();
    let response = token === undefined ? await base(url, init) : await send(token);
    if (response.status === 401) {
      const { insufficientScope: _, ...challenge } = challengeOf(response);
      await response.body?.cancel().catch(() => undefined);
      const next = await session.afterRefusal(token, challenge);
      response = await send(next);
      if (response.status === 401) {
        await response.body?.cancel().catch(() => undefined);
        await session.refused(next);
        const { insufficientScope: _, ...challenge } = challengeOf(response);
        throw new McpAuthorizationRequired(server, 'the server refused a fresh token', challenge);
      }
    }
    if (response.status === 403) {
      const { insufficientScope, ...challenge } = challengeOf(response);
      if (insufficientScope) {
        await response.body?.cancel().catch(() => undefined);
        session.invalidate();
        throw new McpAuthorizationRequired(server, `the server asks for more access${challenge.scope ? ` (scope: ${challenge.scope})` : ''}`, challenge);
      }
    }
    return response;
  };
}
