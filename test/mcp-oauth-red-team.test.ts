import { once } from 'node:events';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { Redis } from 'ioredis';
import type { EventDict } from '#core/events/execution-event.js';
import { redisKeys } from '#transport/redis-keys.js';
import { api } from './support/chat-clients.js';
import { chatToDone } from './support/event-waits.js';
import { TestBrowser } from './support/browser.js';
import { OAuthMcpServer } from './support/oauth-mcp-server.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

/** alice of tenant acme is the attacker, holding only her own key; bob of globex is the one she goes after. */
const ALICE = TEST_API_KEY;
const ACME_ADMIN = 'test-key-acme-admin';
const KEYS = `${TEST_API_KEY}:acme:alice,${OTHER_API_KEY}:globex:bob,${ACME_ADMIN}:acme:carol:admin`;

/**
 * The red team's view of MCP sign-in, through the real gateway and worker:
 * - a sign-in whose authorization URL alice hands to bob, who signs in to the provider in his
 *   own browser: his code must never become alice's token (the callback finishes only in the
 *   browser that started the sign-in);
 * - the gateway's authorize URL never sends a browser to another host by itself: it names it;
 * - a server URL that redirects towards a loopback port nobody allowlisted: the gateway's
 *   sign-in fetches and the worker's connection reach nothing there.
 */
describe('MCP sign-in: what a hostile user reaches through the OAuth flow', () => {
  let system: TestSystem;
  let oauth: OAuthMcpServer;
  /** A server that answers every request with a redirect chain towards `internal`. */
  let redirector: Server;
  /** A loopback service (as Redis is) on a port the egress allowlist does not open. */
  let internal: TcpServer;
  let internalConnections = 0;
  /** What reached the redirector: proof the gateway and the worker did try the server. */
  const relayed: string[] = [];

  const port = (server: Server | TcpServer) => (server.address() as { port: number }).port;

  beforeAll(async () => {
    oauth = await new OAuthMcpServer(120).start();
    internal = createTcpServer((socket) => {
      internalConnections++;
      socket.destroy();
    });
    internal.listen(0, '127.0.0.1');
    await once(internal, 'listening');
    // POST /mcp → 302 /hop (same origin, allowed) → 307 to the internal port; discovery → 302 to it by name.
    redirector = createHttpServer((req, res) => {
      relayed.push(`${req.method} ${req.url}`);
      const to = req.url === '/mcp' ? '/hop' : req.url === '/hop' ? `http://127.0.0.1:${port(internal)}/` : `http://localhost:${port(internal)}/`;
      res.writeHead(req.url === '/hop' ? 307 : 302, { location: to }).end();
    });
    redirector.listen(0, '127.0.0.1');
    await once(redirector, 'listening');
    const redis = new Redis(process.env.DATAAGENT_REDIS_URL!);
    await redis.del(redisKeys.mcpStatus('acme', 'alice'));
    redis.disconnect();
    system = await TestSystem.start({
      env: { DATAAGENT_API_KEYS: KEYS, DATAAGENT_OUTBOUND_ALLOWLIST: `127.0.0.1:${oauth.port},127.0.0.1:${port(redirector)}` },
    });
    await addServer('ledger', `${oauth.url}/mcp`);
  });
  afterAll(async () => {
    await system?.stop();
    await oauth?.stop();
    redirector?.closeAllConnections();
    await new Promise((resolve) => redirector?.close(resolve));
    await new Promise((resolve) => internal?.close(resolve));
  });

  const addServer = async (name: string, url: string) => {
    await api(system.url, 'DELETE', `/users/alice/mcp-servers/${name}`, { apiKey: ALICE });
    expect((await api(system.url, 'POST', '/users/alice/mcp-servers', { apiKey: ALICE, body: { name, url } })).status).toBe(201);
  };
  const authorizeUrl = async (name: string): Promise<string> => (await api(system.url, 'POST', `/users/alice/mcp-servers/${name}/authorize`, { apiKey: ALICE })).body.authorize_url;
  const ledgerOf = async () => ((await api(system.url, 'GET', '/users/alice/mcp-servers', { apiKey: ALICE })).body.servers as Array<Record<string, any>>).find((s) => s.name === 'ledger')!;
  const resultOf = (run: EventDict[]) => run.find((e) => e.event_type === 'tool_result');

  it("the gateway's authorize URL sends no browser to another host by itself: it answers a page naming the host, and binds the sign-in to that browser", async () => {
    const answer = await fetch(await authorizeUrl('ledger'), { redirect: 'manual' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('location')).toBeNull();
    const page = await answer.text();
    const host = new URL(oauth.url).host;
    expect(page).toContain(`<code id="host">${host}</code>`);
    expect(page).toMatch(new RegExp(`<a id="continue" href="${oauth.url}/authorize\\?[^"]+"[^>]*>Continue to ${host}</a>`));
    const cookie = answer.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^dataagent_mcp_sign_in_[0-9a-f]{16}=[\w-]{43};/);
    expect(cookie.split('; ').slice(1).filter((a) => !a.startsWith('Expires='))).toEqual(['Max-Age=600', 'Path=/api/v1/mcp/oauth/callback', 'HttpOnly', 'SameSite=Lax']);
  });

  it("bob's sign-in at the provider, from the link alice sent him, never lands in alice's grant; alice's own browser still finishes her sign-in", async () => {
    oauth.consent = 'page';
    const browser = await TestBrowser.launch();
    try {
      // Each person is signed in to the provider in their own browser.
      const alice = await browser.open(system.url);
      await alice.context.addCookies([{ name: 'provider_user', value: 'alice', url: oauth.url }]);
      const bob = await browser.open(system.url);
      await bob.context.addCookies([{ name: 'provider_user', value: 'bob', url: oauth.url }]);

      // Alice starts her sign-in and stops at the provider's consent page: its URL carries her sign-in's state.
      await alice.page.goto(await authorizeUrl('ledger'));
      await alice.page.getByRole('link', { name: `Continue to ${new URL(oauth.url).host}` }).click();
      await alice.page.waitForURL((url) => url.href.startsWith(`${oauth.url}/authorize?`));
      const lure = alice.page.url();

      // Bob opens it, is signed in to the provider as himself, and allows.
      const exchangesBefore = oauth.exchanges.length;
      await bob.page.goto(lure);
      await bob.page.getByText('Signed in as bob').waitFor();
      await bob.page.getByRole('link', { name: 'Allow' }).click();
      await bob.page.waitForURL(/\/api\/v1\/mcp\/oauth\/callback/);
      expect(await bob.page.locator('h1').textContent()).toBe('Sign-in did not complete');
      expect(await bob.page.locator('#outcome').textContent()).toContain('started in another browser');
      // Bob's code was never redeemed, and alice holds no sign-in at all.
      expect(oauth.exchanges.slice(exchangesBefore)).toEqual([]);
      expect(await ledgerOf()).toMatchObject({ signed_in: false });
      const before = await chatToDone(system.url, ALICE, '[[tool:ledger__whoami {}]]');
      expect(before.find((e) => e.event_type === 'error' && e.error_code === 'mcp_sign_in_required')).toMatchObject({ mcp_server: 'ledger' });
      expect(oauth.calls).toEqual([]);

      // In her own browser, the same sign-in still finishes, as alice.
      await alice.page.getByRole('link', { name: 'Allow' }).click();
      await alice.page.getByText('Signed in to ledger: 1 tool').waitFor();
      expect(oauth.exchanges.slice(exchangesBefore)).toEqual(['alice']);
      const run = await chatToDone(system.url, ALICE, '[[tool:ledger__whoami {}]]');
      const family = String(resultOf(run)?.result).replace('signed in as ', '');
      expect(oauth.accountOf(family)).toBe('alice');
      expect(oauth.calls.map((c) => oauth.accountOf(c.family))).not.toContain('bob');
    } finally {
      oauth.consent = 'at-once';
      await browser.close();
    }
  }, 120_000);

  it('a sign-in whose key was revoked before the callback stores nothing, even in its own browser', async () => {
    const issued = (await api(system.url, 'POST', '/admin/api-keys', { apiKey: ACME_ADMIN, body: { user_id: 'alice', role: 'user' } })).body as { key: string; key_id: string };
    const { authorize_url: url } = (await api(system.url, 'POST', '/users/alice/mcp-servers/ledger/authorize', { apiKey: issued.key })).body;
    const page = await fetch(url, { redirect: 'manual' });
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
    const link = /<a id="continue" href="([^"]+)"/.exec(await page.text())![1]!.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
    // The provider consents at once and answers where the browser goes back.
    const callback = (await fetch(link, { redirect: 'manual' })).headers.get('location')!;
    expect((await api(system.url, 'DELETE', `/admin/api-keys/${issued.key_id}`, { apiKey: ACME_ADMIN })).status).toBe(200);
    const exchangesBefore = oauth.exchanges.length;
    const landed = await fetch(callback, { headers: { cookie } });
    expect(landed.status).toBe(400);
    expect(await landed.text()).toContain('The API key that started this sign-in to ledger is no longer valid');
    expect(oauth.exchanges.length).toBe(exchangesBefore);
  });

  it('a server URL that redirects towards a loopback port nobody allowlisted: neither the sign-in nor the worker reaches it', async () => {
    // Added now, so this test's run is the worker's first connection to it.
    await addServer('relay', `http://127.0.0.1:${port(redirector)}/mcp`);
    const started = await fetch(await authorizeUrl('relay'), { redirect: 'manual' });
    expect(started.status).toBe(502);
    expect(await started.text()).toContain(`port ${port(internal)} is a private, loopback or otherwise internal address`);
    // The gateway followed the allowed hop, and went no further.
    expect(relayed).toContain('GET /hop');
    expect(internalConnections).toBe(0);

    const tried = relayed.length;
    const run = await chatToDone(system.url, ALICE, '[[tool:relay__anything {}]]');
    expect(run.at(-1)).toMatchObject({ event_type: 'done' });
    expect(relayed.length).toBeGreaterThan(tried);
    expect(internalConnections).toBe(0);
  });
});
