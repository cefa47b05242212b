import { MemoryMcpOAuthStore, type McpOAuthGrant } from '#core/mcp/mcp-oauth-store.js';
import { McpAuthorizationRequired } from '../mcp-errors.js';
import { McpOAuthSession, MemoryRefreshLock, oauthFetch } from './mcp-oauth-session.js';

const owner = { tenantId: 'acme', userId: 'alice' };
const TOKEN_URL = 'https://auth.example.test/token';

/** A token endpoint that rotates refresh tokens and refuses one redeemed twice, as strict servers do. */
function tokenEndpoint() {
  const live = new Set(['r0']);
  let issued = 0;
  const calls: string[] = [];
  const fetchFn = async (_url: string | URL, init?: RequestInit): Promise<Response> => {
    const body = new URLSearchParams(String(init?.body));
    const refresh = body.get('refresh_token')!;
    calls.push(refresh);
    await new Promise((r) => setTimeout(r, 20));
    if (!live.delete(refresh)) return Response.json({ error: 'invalid_grant', error_description: 'refresh token already used' }, { status: 400 });
    issued++;
    live.add(`r${issued}`);
    return Response.json({ access_token: `a${issued}`, token_type: 'Bearer', expires_in: 3600, refresh_token: `r${issued}` });
  };
  return { fetchFn, calls, revokeAll: () => live.clear() };
}

function grant(expiresAt: number): McpOAuthGrant {
  return {
    discovery: { authorizationServerUrl: 'https://auth.example.test', authorizationServerMetadata: { issuer: 'https://auth.example.test', authorization_endpoint: 'https://auth.example.test/authorize', token_endpoint: TOKEN_URL, response_types_supported: ['code'] } },
    client: { client_id: 'dataagent' },
    tokens: { access_token: 'a0', token_type: 'Bearer', refresh_token: 'r0' },
    expiresAt,
  };
}

describe('McpOAuthSession', () => {
  it('refreshes an expired token once for twenty concurrent uses on two workers, and all of them use the result', async () => {
    const store = new MemoryMcpOAuthStore();
    const lock = new MemoryRefreshLock();
    const endpoint = tokenEndpoint();
    await store.put(owner, 'linear', grant(Date.now() - 1000), 0);
    const workers = [0, 1].map(() => new McpOAuthSession({ owner, server: 'linear', store, lock, fetchFn: endpoint.fetchFn }));
    const tokens = await Promise.all(Array.from({ length: 20 }, (_, i) => workers[i % 2]!.accessToken()));
    expect(endpoint.calls).toEqual(['r0']);
    expect(new Set(tokens)).toEqual(new Set(['a1']));
    expect((await store.get(owner, 'linear'))?.grant.tokens).toMatchObject({ access_token: 'a1', refresh_token: 'r1' });
  });

  it('without the shared lock, the same twenty redeem the rotated refresh token twice and lose the sign-in', async () => {
    // The failure the lock prevents (LibreChat#15977): each worker refreshes on its own.
    const store = new MemoryMcpOAuthStore();
    const endpoint = tokenEndpoint();
    await store.put(owner, 'linear', grant(Date.now() - 1000), 0);
    const workers = [0, 1].map(() => new McpOAuthSession({ owner, server: 'linear', store, lock: new MemoryRefreshLock(), fetchFn: endpoint.fetchFn }));
    const results = await Promise.allSettled([workers[0]!.accessToken(), workers[1]!.accessToken()]);
    expect(endpoint.calls).toEqual(['r0', 'r0']);
    expect(results.some((r) => r.status === 'rejected' && r.reason instanceof McpAuthorizationRequired)).toBe(true);
  });

  it('uses a token that is not near its expiry as it is', async () => {
    const store = new MemoryMcpOAuthStore();
    const endpoint = tokenEndpoint();
    await store.put(owner, 'linear', grant(Date.now() + 3_600_000), 0);
    const session = new McpOAuthSession({ owner, server: 'linear', store, lock: new MemoryRefreshLock(), fetchFn: endpoint.fetchFn });
    expect(await session.accessToken()).toBe('a0');
    expect(endpoint.calls).toEqual([]);
  });

  it('forgets the sign-in when the refresh is refused (invalid_grant), so the server needs sign-in again', async () => {
    const store = new MemoryMcpOAuthStore();
    const endpoint = tokenEndpoint();
    endpoint.revokeAll();
    await store.put(owner, 'linear', grant(Date.now() - 1000), 0);
    const session = new McpOAuthSession({ owner, server: 'linear', store, lock: new MemoryRefreshLock(), fetchFn: endpoint.fetchFn });
    await expect(session.accessToken()).rejects.toThrow(/needs sign-in: the authorization server refused the refresh token \(invalid_grant\)/);
    expect(await store.get(owner, 'linear')).toBeNull();
    expect(await session.accessToken()).toBeUndefined();
  });

  it('a refresh that read a grant before a sign-out cannot write over the sign-in that follows', async () => {
    const store = new MemoryMcpOAuthStore();
    const v1 = (await store.put(owner, 'linear', grant(0), 0))!;
    await store.delete(owner, 'linear');
    const fresh = { ...grant(Date.now() + 3_600_000), tokens: { access_token: 'new', token_type: 'Bearer' } };
    expect(await store.put(owner, 'linear', fresh, 0)).toBe(v1 + 2);
    expect(await store.put(owner, 'linear', grant(0), v1)).toBeNull();
    expect((await store.get(owner, 'linear'))?.grant.tokens.access_token).toBe('new');
  });
});

describe('oauthFetch', () => {
  const server = (accept: (auth: string | null) => Response) => {
    const seen: Array<string | null> = [];
    const fetchFn = async (_url: string | URL, init?: RequestInit) => {
      const auth = new Headers(init?.headers).get('authorization');
      seen.push(auth);
      return accept(auth);
    };
    return { fetchFn, seen };
  };

  it('sends no token before anyone signed in, and says the server needs sign-in when it answers 401', async () => {
    const store = new MemoryMcpOAuthStore();
    const session = new McpOAuthSession({ owner, server: 'linear', store, lock: new MemoryRefreshLock() });
    const mcp = server(() => new Response(null, { status: 401, headers: { 'www-authenticate': 'Bearer resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource", scope="read"' } }));
    const err = await oauthFetch(mcp.fetchFn, session, 'linear')('https://mcp.example.test/mcp', { method: 'POST' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpAuthorizationRequired);
    expect((err as McpAuthorizationRequired).challenge).toEqual({ scope: 'read', resourceMetadataUrl: 'https://mcp.example.test/.well-known/oauth-protected-resource' });
    expect(mcp.seen).toEqual([null]);
  });

  it('passes a server that needs no sign-in through untouched', async () => {
    const session = new McpOAuthSession({ owner, server: 'open', store: new MemoryMcpOAuthStore(), lock: new MemoryRefreshLock() });
    const mcp = server(() => new Response('{}', { status: 200 }));
    expect((await oauthFetch(mcp.fetchFn, session, 'open')('https://mcp.example.test/mcp')).status).toBe(200);
    expect(mcp.seen).toEqual([null]);
  });

  it('on a 401 for a live token refreshes once and retries; a 403 insufficient_scope asks for sign-in with the new scope', async () => {
    const store = new MemoryMcpOAuthStore();
    const endpoint = tokenEndpoint();
    await store.put(owner, 'linear', grant(Date.now() + 3_600_000), 0);
    const session = new McpOAuthSession({ owner, server: 'linear', store, lock: new MemoryRefreshLock(), fetchFn: endpoint.fetchFn });
    const mcp = server((auth) => (auth === 'Bearer a1' ? new Response('{}', { status: 200 }) : new Response(null, { status: 401 })));
    expect((await oauthFetch(mcp.fetchFn, session, 'linear')('https://mcp.example.test/mcp')).status).toBe(200);
    expect(mcp.seen).toEqual(['Bearer a0', 'Bearer a1']);

    const scoped = server(() => new Response(null, { status: 403, headers: { 'www-authenticate': 'Bearer error="insufficient_scope", scope="read write"' } }));
    const err = await oauthFetch(scoped.fetchFn, session, 'linear')('https://mcp.example.test/mcp').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpAuthorizationRequired);
    expect((err as McpAuthorizationRequired).challenge.scope).toBe('read write');

    // The step-up sign-in's token is the next request's, not the one read a moment ago.
    const current = (await store.get(owner, 'linear'))!;
    await store.put(owner, 'linear', { ...current.grant, tokens: { access_token: 'wider', token_type: 'Bearer' } }, current.version);
    const wider = server(() => new Response('{}', { status: 200 }));
    await oauthFetch(wider.fetchFn, session, 'linear')('https://mcp.example.test/mcp');
    expect(wider.seen).toEqual(['Bearer wider']);
  });
});
