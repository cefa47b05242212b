import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

interface Grant {
  /** Stays the same across refreshes: tells whose sign-in a token belongs to. */
  family: string;
  /** Who signed in at this authorization server (its own `provider_user` cookie), when consent is a page. */
  account?: string;
  scope: string;
  revoked: boolean;
}

/**
 * An OAuth-protected MCP server and its authorization server in one HTTP server, as the hosted
 * ones work: protected resource metadata (RFC 9728), authorization server metadata (RFC 8414),
 * dynamic registration, authorization code with PKCE S256 (consent given at once), short-lived
 * access tokens, refresh tokens that rotate and whose reuse revokes the whole family, and
 * revocation (RFC 7009). Its MCP tool `whoami` answers which sign-in (family) the caller's token
 * belongs to; every call, refresh and code exchange is recorded. With `consent = 'page'` it works
 * as a provider people are signed in to: `/authorize` shows a page with an Allow link, and the
 * code it then issues belongs to the account its `provider_user` cookie names.
 */
export class OAuthMcpServer {
  readonly refreshes: Array<{ at: number; ok: boolean }> = [];
  readonly calls: Array<{ family: string; token: string }> = [];
  readonly registrations: Array<Record<string, unknown>> = [];
  readonly authorizations: Array<Record<string, string>> = [];
  /** Authorization codes redeemed for tokens, by account (`-` without one). */
  readonly exchanges: string[] = [];
  /** `at-once`: `/authorize` sends the browser back with a code; `page`: only after the person clicks Allow. */
  consent: 'at-once' | 'page' = 'at-once';
  private readonly codes = new Map<string, { challenge: string; redirectUri: string; clientId: string; scope: string; resource?: string; account?: string }>();
  private readonly access = new Map<string, { grant: Grant; expiresAt: number }>();
  private readonly refresh = new Map<string, { grant: Grant; used: boolean }>();
  private server?: Server;
  url = '';

  /** @param tokenSeconds How long the access tokens it issues from now on live. */
  constructor(public tokenSeconds = 3) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  /** Ends the life of every access token issued so far, as time passing would; their refresh tokens stay good. */
  expireAll(): void {
    for (const held of this.access.values()) held.expiresAt = 0;
  }

  /** Revokes every token of every sign-in, as a person revoking the app at the provider does. */
  revokeAll(): void {
    for (const { grant } of this.access.values()) grant.revoked = true;
  }

  /** The account that signed in to the sign-in (family) `whoami` named. */
  accountOf(family: string): string | undefined {
    for (const { grant } of this.access.values()) if (grant.family === family) return grant.account;
    return undefined;
  }

  /** The sign-in (family) an access token belongs to. */
  familyOf(token: string): string | undefined {
    return this.access.get(token)?.grant.family;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };
    if (url.pathname === '/.well-known/oauth-protected-resource/mcp' || url.pathname === '/.well-known/oauth-protected-resource') {
      return json(200, { resource: `${this.url}/mcp`, authorization_servers: [this.url], scopes_supported: ['tracker'] });
    }
    if (url.pathname === '/.well-known/oauth-authorization-server') {
      return json(200, {
        issuer: this.url,
        authorization_endpoint: `${this.url}/authorize`,
        token_endpoint: `${this.url}/token`,
        registration_endpoint: `${this.url}/register`,
        revocation_endpoint: `${this.url}/revoke`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        scopes_supported: ['tracker', 'offline_access'],
      });
    }
    if (url.pathname === '/register' && req.method === 'POST') {
      const body = JSON.parse(await text(req)) as Record<string, unknown>;
      this.registrations.push(body);
      return json(201, { ...body, client_id: `client-${randomBytes(6).toString('hex')}`, token_endpoint_auth_method: 'none' });
    }
    if (url.pathname === '/authorize' || url.pathname === '/authorize/allow') {
      const q = Object.fromEntries(url.searchParams);
      if (url.pathname === '/authorize') this.authorizations.push(q);
      if (q.code_challenge_method !== 'S256' || !q.code_challenge || !q.redirect_uri) return json(400, { error: 'invalid_request' });
      const account = /(?:^|;\s*)provider_user=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
      if (this.consent === 'page' && url.pathname === '/authorize') {
        const allow = `/authorize/allow${url.search}`.replace(/&/g, '&amp;');
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>Consent</title><p>Signed in as ${account ?? 'nobody'}.</p><a href="${allow}">Allow</a>`);
        return;
      }
      const code = randomBytes(16).toString('hex');
      this.codes.set(code, { challenge: q.code_challenge, redirectUri: q.redirect_uri, clientId: q.client_id ?? '', scope: q.scope ?? '', ...(q.resource ? { resource: q.resource } : {}), ...(account ? { account } : {}) });
      const back = new URL(q.redirect_uri);
      back.searchParams.set('code', code);
      if (q.state) back.searchParams.set('state', q.state);
      res.writeHead(302, { location: back.toString() }).end();
      return;
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const form = new URLSearchParams(await text(req));
      if (form.get('grant_type') === 'authorization_code') {
        const code = this.codes.get(form.get('code') ?? '');
        this.codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        if (!code || createHash('sha256').update(verifier).digest('base64url') !== code.challenge || form.get('redirect_uri') !== code.redirectUri) {
          return json(400, { error: 'invalid_grant' });
        }
        this.exchanges.push(code.account ?? '-');
        return json(200, this.issue({ family: randomBytes(6).toString('hex'), scope: code.scope, revoked: false, ...(code.account ? { account: code.account } : {}) }));
      }
      if (form.get('grant_type') === 'refresh_token') {
        const held = this.refresh.get(form.get('refresh_token') ?? '');
        const ok = held !== undefined && !held.used && !held.grant.revoked;
        this.refreshes.push({ at: Date.now(), ok });
        if (!ok) {
          // A reused refresh token means it leaked: the whole sign-in goes.
          if (held) held.grant.revoked = true;
          return json(400, { error: 'invalid_grant', error_description: 'refresh token is not valid' });
        }
        held.used = true;
        await new Promise((r) => setTimeout(r, 50));
        return json(200, this.issue(held.grant));
      }
      return json(400, { error: 'unsupported_grant_type' });
    }
    if (url.pathname === '/revoke' && req.method === 'POST') {
      const token = new URLSearchParams(await text(req)).get('token') ?? '';
      const grant = this.access.get(token)?.grant ?? this.refresh.get(token)?.grant;
      if (grant) grant.revoked = true;
      res.writeHead(200).end();
      return;
    }
    if (url.pathname === '/mcp') {
      const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      const held = this.access.get(token);
      if (!held || held.grant.revoked || held.expiresAt < Date.now()) {
        res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${this.url}/.well-known/oauth-protected-resource/mcp", scope="tracker"` }).end();
        return;
      }
      const body = req.method === 'POST' ? JSON.parse(await text(req)) : undefined;
      const mcp = new McpServer({ name: 'tracker', version: '1.0.0' });
      mcp.registerTool('whoami', { description: 'Which sign-in the call came with' }, async () => {
        this.calls.push({ family: held.grant.family, token });
        return { content: [{ type: 'text', text: `signed in as ${held.grant.family}` }] };
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void transport.close());
      await mcp.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    res.writeHead(404).end();
  }

  private issue(grant: Grant) {
    const accessToken = `at-${randomBytes(12).toString('hex')}`;
    const refreshToken = `rt-${randomBytes(12).toString('hex')}`;
    this.access.set(accessToken, { grant, expiresAt: Date.now() + this.tokenSeconds * 1000 });
    this.refresh.set(refreshToken, { grant, used: false });
    return { access_token: accessToken, token_type: 'Bearer', expires_in: this.tokenSeconds, refresh_token: refreshToken, scope: grant.scope };
  }
}

async function text(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
