import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { RedisClient } from '#transport/redis-connection.js';
import { isAdmin, type Caller } from '#core/auth/caller.js';
import { MCP_NAME_PATTERN, type McpServerConfig } from '#core/mcp/mcp-config.js';
import type { McpOAuthOwner } from '#core/mcp/mcp-oauth-store.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { checkOutboundUrl } from '#core/tools/builtin/net/outbound-guard.js';
import { McpConnection } from '#mcp/mcp-connection.js';
import { challengeOf, McpOAuthSession, oauthFetch } from '#mcp/oauth/mcp-oauth-session.js';
import { beginSignIn, clientMetadataDocument, completeSignIn, preRegisteredClient, type OAuthClientIdentity, type PendingSignIn } from '#mcp/oauth/mcp-sign-in.js';
import { policyFetch } from '#mcp/pinned-fetch.js';
import { announceMcpConfigChange } from '#transport/mcp-config-changes.js';
import { writeMcpStatus } from '#transport/mcp-status.js';
import { redisKeys } from '#transport/redis-keys.js';
import { RedisRefreshLock } from '#transport/redis-refresh-lock.js';
import { ApiKeyService } from '../auth/api-key.service.js';
import { consumeTicket, StreamTickets } from '../auth/stream-tickets.service.js';
import { ApiError } from '../common/api-error.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { REDIS, SETTINGS, STORE } from '../infra/tokens.js';
import { McpReleases } from './mcp-releases.service.js';
import { cookieValue, newSignInBrowser, sameBrowser, signInCookieName } from './sign-in-browser.js';

/** How long a person has between opening the authorize URL and coming back to the callback. */
const PENDING_SECONDS = 600;
/** How long an authorize URL (its ticket) may wait before it is opened. */
const AUTHORIZE_TICKET_SECONDS = 300;

interface PendingRecord {
  tenant_id: string;
  user_id: string;
  server_name: string;
  /** The SHA-256 of the secret in the cookie of the browser that opened the authorize URL. */
  browser_hash: string;
  /** Whose key opened the authorize URL (the person, or their admin): the sign-in ends with that key. */
  started_by: { tenant_id: string; user_id: string; role: Caller['role']; key_id?: string };
  pending: PendingSignIn;
}

/** A started sign-in: where to send the browser, and the cookie that lets only this browser come back. */
export interface StartedSignIn {
  /** The authorization server's authorization endpoint, with the request's parameters. */
  authorizationUrl: URL;
  server: string;
  userId: string;
  cookie: { name: string; value: string; path: string; maxAgeMs: number; secure: boolean };
}

/** What the callback page says: signed in (and what the check found), or why not. */
export interface SignInOutcome {
  ok: boolean;
  server?: string;
  message: string;
}

/**
 * People's sign-ins to their OAuth-protected MCP servers, the gateway's part: an authorize URL
 * that works in the person's browser as it is (a single-use ticket, never the API key), the
 * page that names the authorization server before the browser goes there (state bound to the
 * person, the server, a nonce and that browser's cookie; the PKCE verifier stays in Redis), the
 * callback that redeems the code and stores the tokens in that browser only, and
 * sign-out (revoked where the server offers RFC 7009, then forgotten). Workers hear of each
 * change and reconnect with the new sign-in.
 */
@Injectable()
export class McpSignIns {
  private readonly logger = new Logger('mcp-sign-in');
  private readonly fetchFn;
  private readonly checkUrl;

  constructor(
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
    @Inject(STORE) private readonly store: ConversationStore,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly tickets: StreamTickets,
    private readonly keys: ApiKeyService,
    private readonly releases: McpReleases,
  ) {
    this.checkUrl = (url: string) => checkOutboundUrl(url, { allowlist: settings.tools.outboundAllowlist });
    this.fetchFn = policyFetch(this.checkUrl);
  }

  /** Where browsers and authorization servers reach this gateway. */
  get publicUrl(): string {
    return (this.settings.server.publicUrl ?? `http://localhost:${this.settings.server.port}`).replace(/\/+$/, '');
  }

  /** The client metadata document, served at its own URL (the client_id where that URL is https). */
  clientMetadata() {
    return clientMetadataDocument({ ...this.identity(), clientMetadataUrl: this.clientMetadataUrl });
  }

  /**
   * A URL that starts the person's sign-in to their server in a browser, as it is: a single-use
   * ticket of a few minutes stands in for the API key.
   */
  async authorizeUrl(caller: Caller, userId: string, name: string): Promise<{ authorize_url: string; expires_in: number }> {
    const { owner } = await this.remoteServer(caller, userId, name);
    const path = this.authorizePath(owner.userId, name);
    const issued = await this.tickets.issue(caller, path, AUTHORIZE_TICKET_SECONDS);
    return { authorize_url: `${this.publicUrl}${path}?ticket=${encodeURIComponent(issued.ticket)}`, expires_in: issued.expiresInSeconds };
  }

  /** The path of the authorize URL (the ticket adds itself). */
  authorizePath(userId: string, name: string): string {
    return `/api/v1/users/${encodeURIComponent(userId)}/mcp-servers/${encodeURIComponent(name)}/authorize`;
  }

  /**
   * Starts the sign-in: asks the server what it wants (its 401 challenge), discovers its
   * authorization server, registers or names the client, and answers where to send the browser
   * and the cookie that binds the sign-in to it (see {@link newSignInBrowser}).
   * @throws ApiError 401 when the ticket was used already; 404 for a server the person does not have;
   *   502 when discovery fails or the authorization endpoint is not an http(s) URL.
   */
  async start(caller: Caller, userId: string, name: string, ticket: string | undefined): Promise<StartedSignIn> {
    // The guard accepted the ticket for this path; it opens it once.
    if (ticket !== undefined && !(await consumeTicket(this.redis, ticket))) {
      throw new ApiError(401, 'invalid_stream_ticket', 'This sign-in link was used already: start the sign-in again from the MCP tab');
    }
    const { owner, config } = await this.remoteServer(caller, userId, name);
    const state = randomBytes(24).toString('base64url');
    try {
      const challenge = await this.challenge(config);
      const identity = this.identity(config);
      const { authorizationUrl, pending } = await beginSignIn({ serverUrl: config.url!, identity, state, fetchFn: this.fetchFn, ...challenge, ...(config.oauth?.scope && !challenge.scope ? { scope: config.oauth.scope } : {}) });
      // The browser is sent there through a link: a javascript: or data: URL would run on the gateway's page.
      if (authorizationUrl.protocol !== 'https:' && authorizationUrl.protocol !== 'http:') throw new Error(`its authorization endpoint is not an http(s) URL (${authorizationUrl.protocol})`);
      const browser = newSignInBrowser();
      const startedBy = { tenant_id: caller.tenantId, user_id: caller.userId, role: caller.role, ...(caller.keyId ? { key_id: caller.keyId } : {}) };
      const record: PendingRecord = { tenant_id: owner.tenantId, user_id: owner.userId, server_name: name, browser_hash: browser.hash, started_by: startedBy, pending };
      await this.redis.set(redisKeys.mcpOAuthPending(state), JSON.stringify(record), 'EX', PENDING_SECONDS);
      const callback = new URL(identity.redirectUrl);
      return {
        authorizationUrl,
        server: name,
        userId: owner.userId,
        cookie: { name: signInCookieName(state), value: browser.secret, path: callback.pathname, maxAgeMs: PENDING_SECONDS * 1000, secure: callback.protocol === 'https:' },
      };
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw new ApiError(502, 'mcp_sign_in_failed', `Could not start the sign-in to ${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /**
   * The authorization server sent the browser back: in the browser that started the sign-in
   * only (its cookie), redeems the code, stores the tokens for the person who started it, tells
   * the workers, and checks the server takes them. Anywhere else nothing is redeemed, and the
   * sign-in stays open for the browser it belongs to.
   * @param cookies The callback request's Cookie header.
   */
  async finish(query: { code?: unknown; state?: unknown; error?: unknown; error_description?: unknown }, cookies: string | undefined): Promise<SignInOutcome & { clearCookie?: { name: string; path: string } }> {
    const state = typeof query.state === 'string' ? query.state : '';
    const expired: SignInOutcome = { ok: false, message: 'This sign-in has expired or was finished already. Start it again from the MCP tab.' };
    const key = redisKeys.mcpOAuthPending(state);
    const seen = state ? await this.redis.get(key) : null;
    if (!seen) return expired;
    const cookieName = signInCookieName(state);
    const started = JSON.parse(seen) as PendingRecord;
    if (!sameBrowser(cookieValue(cookies, cookieName), started.browser_hash)) {
      this.logger.warn(`a callback for ${started.user_id}'s sign-in to ${started.server_name} came back to a browser that did not start it: nothing was redeemed`);
      return {
        ok: false,
        message: 'This sign-in was started in another browser, so it cannot finish here and nothing was stored. If you did not start it, someone may have sent you this link: close this page. Otherwise start the sign-in again from the MCP tab in this browser.',
      };
    }
    // Single use: of two callbacks racing with the right cookie, one redeems.
    const raw = await this.redis.getdel(key);
    if (raw !== seen) return expired;
    const finished = await this.redeem(started, query);
    return { ...finished, clearCookie: { name: cookieName, path: new URL(this.identity().redirectUrl).pathname } };
  }

  /** Redeems the code of a sign-in that came back to its own browser, for the person who started it while their key is still good. */
  private async redeem(record: PendingRecord, query: { code?: unknown; error?: unknown; error_description?: unknown }): Promise<SignInOutcome> {
    const name = record.server_name;
    const by = record.started_by;
    if (!by || !(await this.keys.isStillValid({ tenantId: by.tenant_id, userId: by.user_id, role: by.role, ...(by.key_id ? { keyId: by.key_id } : {}) }))) {
      return { ok: false, server: name, message: `The API key that started this sign-in to ${name} is no longer valid, so nothing was stored.` };
    }
    if (typeof query.error === 'string') {
      return { ok: false, server: name, message: `The authorization server did not sign you in to ${name}: ${query.error}${typeof query.error_description === 'string' ? ` (${query.error_description})` : ''}` };
    }
    if (typeof query.code !== 'string' || query.code === '') return { ok: false, server: name, message: `The authorization server came back without a code for ${name}.` };
    const owner: McpOAuthOwner = { tenantId: record.tenant_id, userId: record.user_id };
    const server = await this.store.mcpServers.get(owner.tenantId, owner.userId, name);
    if (!server) return { ok: false, server: name, message: `The MCP server ${name} was removed meanwhile.` };
    try {
      const grant = await completeSignIn(record.pending, query.code, this.identity(server.config), this.fetchFn);
      const current = await this.store.mcpOAuth.get(owner, name);
      if ((await this.store.mcpOAuth.put(owner, name, grant, current?.version ?? 0)) === null) throw new Error('another sign-in to this server was stored at the same moment; try again');
    } catch (err) {
      this.logger.warn(`sign-in to ${name} failed: ${err instanceof Error ? err.message : String(err)}`);
      return { ok: false, server: name, message: `Signing in to ${name} failed: ${err instanceof Error ? err.message : String(err)}` };
    }
    await this.changed(owner, name, 'signed_in');
    const check = await this.check(owner, server.config);
    return { ok: true, server: name, message: check };
  }

  /** Signs the person out: the tokens are revoked where the server offers it (RFC 7009), then forgotten. */
  async signOut(caller: Caller, userId: string, name: string): Promise<{ server_name: string; signed_out: boolean; revoked: boolean }> {
    const { owner } = await this.serverOf(caller, userId, name);
    const stored = await this.store.mcpOAuth.get(owner, name);
    let revoked = false;
    if (stored) {
      revoked = await this.revoke(stored.grant).catch((err: unknown) => {
        this.logger.warn(`could not revoke the sign-in to ${name}: ${err instanceof Error ? err.message : String(err)}`);
        return false;
      });
    }
    const signedOut = await this.store.mcpOAuth.delete(owner, name);
    if (signedOut) {
      await this.changed(owner, name, 'signed_out');
      await writeMcpStatus(this.redis, owner, name, { status: 'needs_authorization', last_error: 'signed out', tool_count: 0, last_check: new Date().toISOString(), worker_id: 'gateway' }).catch(() => undefined);
    }
    return { server_name: name, signed_out: signedOut, revoked };
  }

  /** Whether the person has a sign-in stored for the server. */
  async signedIn(owner: McpOAuthOwner, name: string): Promise<boolean> {
    return (await this.store.mcpOAuth.get(owner, name)) !== null;
  }

  private get clientMetadataUrl(): string {
    return `${this.publicUrl}/api/v1/mcp/oauth/client-metadata.json`;
  }

  private identity(config?: McpServerConfig): OAuthClientIdentity {
    return {
      redirectUrl: `${this.publicUrl}/api/v1/mcp/oauth/callback`,
      clientName: 'DataAgent',
      // Authorization servers accept a metadata document's URL as a client_id only over https.
      ...(this.clientMetadataUrl.startsWith('https://') ? { clientMetadataUrl: this.clientMetadataUrl } : {}),
      ...(config ? preRegisteredClient(config) : {}),
    };
  }

  /** What the server's 401 asks for (scope, resource metadata), from an unsigned initialize. */
  private async challenge(config: McpServerConfig): Promise<{ scope?: string; resourceMetadataUrl?: string }> {
    const response = await this.fetchFn(config.url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'dataagent', version: '0.1.0' } } }),
    }).catch(() => undefined);
    if (!response || (response.status !== 401 && response.status !== 403)) return {};
    const { insufficientScope: _, ...challenge } = challengeOf(response);
    return challenge;
  }

  /** Connects once with the new sign-in, and records what the workers would see. */
  private async check(owner: McpOAuthOwner, config: McpServerConfig): Promise<string> {
    const session = new McpOAuthSession({ owner, server: config.name, store: this.store.mcpOAuth, lock: new RedisRefreshLock(this.redis), fetchFn: this.fetchFn });
    const connection = new McpConnection(config, { connectTimeoutMs: 10_000, checkUrl: this.checkUrl, authorizeFetch: (base) => oauthFetch(base, session, config.name) });
    try {
      await connection.connect();
      return `Signed in to ${config.name}: ${connection.catalog.tools.length} tool${connection.catalog.tools.length === 1 ? '' : 's'}.`;
    } catch (err) {
      return `Signed in to ${config.name}, but the server did not answer as expected: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      await writeMcpStatus(this.redis, owner, config.name, {
        status: connection.status === 'disconnected' && !connection.lastError ? 'connected' : connection.status,
        last_error: connection.lastError ?? null,
        tool_count: connection.catalog.tools.length,
        last_check: new Date().toISOString(),
        worker_id: 'gateway',
      }).catch(() => undefined);
      await connection.close().catch(() => undefined);
    }
  }

  /** RFC 7009 at the authorization server's revocation endpoint, the refresh token first. */
  private async revoke(grant: { discovery: Record<string, unknown>; client: { client_id: string; client_secret?: string }; tokens: { access_token: string; refresh_token?: string } }): Promise<boolean> {
    const metadata = (grant.discovery.authorizationServerMetadata ?? {}) as { revocation_endpoint?: string; revocation_endpoint_auth_methods_supported?: string[] };
    if (!metadata.revocation_endpoint) return false;
    const { client } = grant;
    const basic = client.client_secret !== undefined && (metadata.revocation_endpoint_auth_methods_supported ?? ['client_secret_basic']).includes('client_secret_basic');
    for (const [token, hint] of [
      [grant.tokens.refresh_token, 'refresh_token'],
      [grant.tokens.access_token, 'access_token'],
    ] as const) {
      if (!token) continue;
      const body = new URLSearchParams({ token, token_type_hint: hint, ...(basic ? {} : { client_id: client.client_id, ...(client.client_secret ? { client_secret: client.client_secret } : {}) }) });
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      if (basic) headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret!)}`).toString('base64')}`;
      const response = await this.fetchFn(metadata.revocation_endpoint, { method: 'POST', headers, body });
      if (!response.ok) throw new Error(`the revocation endpoint answered ${response.status}`);
    }
    return true;
  }

  /** Workers close the person's connection to the server (the next run connects with the new sign-in); their sockets hear of it. */
  private async changed(owner: McpOAuthOwner, name: string, change: 'signed_in' | 'signed_out'): Promise<void> {
    await this.releases.serverChanged(owner.tenantId, owner.userId, name, change);
    await announceMcpConfigChange(this.redis, owner.tenantId, owner.userId, name, change).catch((err: unknown) => {
      this.logger.warn(`could not announce the sign-in change: ${err instanceof Error ? err.message : String(err)}`);
    });
  }

  private async serverOf(caller: Caller, userId: string, name: string): Promise<{ owner: McpOAuthOwner; config: McpServerConfig }> {
    const allowed = userId === caller.userId || isAdmin(caller);
    if (!allowed || userId.length === 0 || userId.length > 128) throw ApiError.notFound('user', userId);
    const owner = { tenantId: caller.tenantId, userId };
    const server = MCP_NAME_PATTERN.test(name) ? await this.store.mcpServers.get(owner.tenantId, owner.userId, name) : null;
    if (!server) throw new ApiError(404, 'mcp_server_not_found', `No MCP server named ${name}`);
    return { owner, config: server.config };
  }

  private async remoteServer(caller: Caller, userId: string, name: string): Promise<{ owner: McpOAuthOwner; config: McpServerConfig }> {
    const found = await this.serverOf(caller, userId, name);
    if (found.config.transport === 'stdio' || !found.config.url) {
      throw new ApiError(422, 'mcp_server_not_remote', `${name} is a stdio server: sign-in is for servers reached by URL`);
    }
    return found;
  }
}
