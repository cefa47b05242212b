import { Redis } from 'ioredis';
import type { EventDict } from '#core/events/execution-event.js';
import { redisKeys } from '#transport/redis-keys.js';
import { api, assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { chatToDone, waitUntil } from './support/event-waits.js';
import { TestBrowser } from './support/browser.js';
import { OAuthMcpServer } from './support/oauth-mcp-server.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

const ALICE = TEST_API_KEY;
const BOB = OTHER_API_KEY;

/**
 * A person's sign-in to an OAuth-protected MCP server, end to end with an authorization server
 * of the test's own (tokens it can be told to expire, rotating refresh tokens whose reuse revokes the sign-in):
 * register over REST, needs_authorization, the authorize_url followed as a browser would, the
 * callback, Alice's token on her calls only, one refresh for twenty runs on two workers, and a
 * revoked sign-in back to needs_authorization with the chat saying so.
 */
describe('MCP servers that sign each person in (OAuth)', () => {
  let system: TestSystem;
  let oauth: OAuthMcpServer;

  beforeAll(async () => {
    oauth = await new OAuthMcpServer(120).start();
    const redis = new Redis(process.env.DATAAGENT_REDIS_URL!);
    await redis.del(redisKeys.mcpStatus('acme', 'alice'), redisKeys.mcpStatus('acme', 'bob'));
    redis.disconnect();
    system = await TestSystem.start({ workers: 2, env: { DATAAGENT_OUTBOUND_ALLOWLIST: `127.0.0.1:${oauth.port}`, DATAAGENT_WORKER_CONCURRENCY: '10' } });
    for (const key of [ALICE, BOB]) {
      const user = key === ALICE ? 'alice' : 'bob';
      expect((await api(system.url, 'POST', `/users/${user}/mcp-servers`, { apiKey: key, body: { name: 'tracker', url: `${oauth.url}/mcp` } })).status).toBe(201);
    }
  });
  afterAll(async () => {
    await system?.stop();
    await oauth?.stop();
  });

  const chat = async (key: string, message = '[[tool:tracker__whoami {}]]') => {
    const run = await chatToDone(system.url, key, message);
    assertWellFormedRun(run);
    return run;
  };
  const resultOf = (run: EventDict[]) => run.find((e) => e.event_type === 'tool_result');
  const signInNotice = (run: EventDict[]) => run.find((e) => e.event_type === 'error' && e.error_code === 'mcp_sign_in_required');
  const serverOf = async (user: string, key: string) => ((await api(system.url, 'GET', `/users/${user}/mcp-servers`, { apiKey: key })).body.servers as Array<Record<string, any>>).find((s) => s.name === 'tracker')!;

  /**
   * What a browser does with the authorize_url: keeps the cookies each host sets, follows each
   * redirect and the gateway's Continue link to the authorization server, and reads the page it lands on.
   */
  async function followAsBrowser(url: string): Promise<{ status: number; page: string; hops: string[] }> {
    const hops: string[] = [];
    const jar = new Map<string, Map<string, string>>();
    for (let at = url; ; ) {
      hops.push(at);
      const host = new URL(at).host;
      const cookies = [...(jar.get(host) ?? new Map<string, string>())].map(([name, value]) => `${name}=${value}`).join('; ');
      const res = await fetch(at, { redirect: 'manual', headers: cookies ? { cookie: cookies } : {} });
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const [name, value] = pair!.split('=') as [string, string];
        jar.set(host, (jar.get(host) ?? new Map<string, string>()).set(name, value));
      }
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        at = new URL(location, at).toString();
        continue;
      }
      const page = await res.text();
      const link = /<a id="continue" href="([^"]+)"/.exec(page)?.[1];
      if (link) {
        at = new URL(link.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))), at).toString();
        continue;
      }
      return { status: res.status, page, hops };
    }
  }

  it('tells the person and the model a server needs sign-in, without failing the run, and offers an authorize_url', async () => {
    // Alice's open socket hears that the server waits for her, with a sign-in link of its own.
    const socket = await connectChat(system.url, ALICE);
    const userEvents: EventDict[] = [];
    socket.on('event', (event: EventDict) => {
      if (event.event_type === ('mcp_config_changed' as string)) userEvents.push(event);
    });
    const run = await chat(ALICE);
    expect(run.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
    expect(signInNotice(run)).toMatchObject({ recoverable: true, mcp_server: 'tracker', error: expect.stringContaining('needs you to sign in') });
    const prompt = system.llm.requests.findLast((r) => r.body.messages?.some((m) => typeof m.content === 'string' && m.content.includes('tracker needs the person to sign in')));
    expect(prompt).toBeDefined();
    expect(oauth.calls).toEqual([]);

    await waitUntil(async () => (await serverOf('alice', ALICE)).status === 'needs_authorization', 10_000);
    const view = await serverOf('alice', ALICE);
    expect(view).toMatchObject({ status: 'needs_authorization', signed_in: false, authorize_url: expect.stringMatching(/\/api\/v1\/users\/alice\/mcp-servers\/tracker\/authorize\?ticket=dast_/) });
    // The authorize URL carries a ticket, never the key.
    expect(view.authorize_url).not.toContain(ALICE);
    await waitUntil(() => userEvents.length > 0, 10_000);
    expect(userEvents[0]).toMatchObject({ server_name: 'tracker', change: 'needs_authorization', authorize_url: expect.stringContaining('/api/v1/users/alice/mcp-servers/tracker/authorize?ticket=dast_') });
    socket.disconnect();
  });

  it("signs Alice in through the browser flow; her calls carry her token, Bob's none", async () => {
    const { authorize_url: url } = (await api(system.url, 'POST', '/users/alice/mcp-servers/tracker/authorize', { apiKey: ALICE })).body;
    const landed = await followAsBrowser(url);
    expect(landed.status).toBe(200);
    expect(landed.page).toContain('Signed in to tracker: 1 tool');
    // gateway authorize (the page naming the authorization server) → authorization server → gateway callback.
    expect(landed.hops.map((h) => new URL(h).pathname)).toEqual(['/api/v1/users/alice/mcp-servers/tracker/authorize', '/authorize', '/api/v1/mcp/oauth/callback']);
    const asked = oauth.authorizations.at(-1)!;
    expect(asked).toMatchObject({ code_challenge_method: 'S256', resource: `${oauth.url}/mcp`, scope: 'tracker offline_access', state: expect.any(String) });
    // The ticket opens the sign-in once.
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(401);
    expect(await serverOf('alice', ALICE)).toMatchObject({ status: 'connected', signed_in: true, tool_count: 1 });

    const alice = await chat(ALICE);
    expect(resultOf(alice)).toMatchObject({ status: 'success', result: expect.stringMatching(/^signed in as [0-9a-f]+$/) });
    const family = String(resultOf(alice)!.result).replace('signed in as ', '');
    expect(oauth.calls.every((c) => c.family === family)).toBe(true);

    const callsBefore = oauth.calls.length;
    const bob = await chat(BOB);
    expect(signInNotice(bob)).toMatchObject({ mcp_server: 'tracker' });
    expect(oauth.calls).toHaveLength(callsBefore);
    expect((await serverOf('bob', BOB)).signed_in).toBe(false);
  });

  it('after the token expires, twenty runs on two workers make exactly one refresh and all use it', async () => {
    // Expired at the server, before the gateway expected it: every run's first call is refused.
    // (Refreshing ahead of the expiry the token came with is mcp-oauth-session.spec.ts's, on a fake clock.)
    oauth.expireAll();
    const before = oauth.refreshes.length;
    const runs = await Promise.all(Array.from({ length: 20 }, () => chat(ALICE)));
    expect(runs.map((r) => resultOf(r)?.status)).toEqual(Array(20).fill('success'));
    expect(oauth.refreshes.slice(before)).toEqual([{ at: expect.any(Number), ok: true }]);
    const workers = new Set(runs.map((r) => r.find((e) => e.event_type === 'run_started')?.worker_id));
    expect(workers.size).toBe(2);
    console.log(`[mcp oauth] 20 runs on ${workers.size} workers after expiry: ${oauth.refreshes.length - before} refresh`);
  });

  it('a sign-in revoked at the server brings back needs_authorization, and the chat says so', async () => {
    oauth.revokeAll();
    const run = await chat(ALICE);
    expect(resultOf(run)).toMatchObject({ status: 'error', result: { success: false, details: { reason: 'sign_in_required' }, error: expect.stringContaining('tracker is unavailable: it needs sign-in') } });
    await waitUntil(async () => (await serverOf('alice', ALICE)).status === 'needs_authorization', 10_000);
    expect(await serverOf('alice', ALICE)).toMatchObject({ signed_in: false, authorize_url: expect.any(String) });
    expect(signInNotice(await chat(ALICE))).toMatchObject({ mcp_server: 'tracker' });
  });

  it('signs out: the tokens are revoked at the server and forgotten', async () => {
    const { authorize_url: url } = (await api(system.url, 'POST', '/users/alice/mcp-servers/tracker/authorize', { apiKey: ALICE })).body;
    expect((await followAsBrowser(url)).status).toBe(200);
    expect(resultOf(await chat(ALICE))?.status).toBe('success');
    const out = await api(system.url, 'DELETE', '/users/alice/mcp-servers/tracker/authorize', { apiKey: ALICE });
    expect(out.body).toEqual({ server_name: 'tracker', signed_out: true, revoked: true });
    expect(await serverOf('alice', ALICE)).toMatchObject({ status: 'needs_authorization', signed_in: false });
    expect(signInNotice(await chat(ALICE))).toMatchObject({ mcp_server: 'tracker' });
    // Nobody else signs Alice out, nor starts her sign-in.
    expect((await api(system.url, 'POST', '/users/alice/mcp-servers/tracker/authorize', { apiKey: BOB })).status).toBe(404);
    expect((await api(system.url, 'DELETE', '/users/alice/mcp-servers/tracker/authorize', { apiKey: BOB })).status).toBe(404);
  });

  it("in Chromium, the MCP tab's Sign in completes the flow and the status turns connected; Sign out undoes it", async () => {
    const browser = await TestBrowser.launch();
    try {
      const { page } = await browser.open(system.url);
      await page.goto('/');
      await page.getByTestId('api-key').fill(ALICE);
      await page.getByTestId('sign-in').click();
      await page.getByTestId('signed-in-as').filter({ hasText: 'alice' }).waitFor();
      await page.getByTestId('tab-mcp').click();
      const tracker = page.locator('[data-testid="mcp-server"][data-name="tracker"]');
      await tracker.locator('[data-testid="mcp-sign-in"]').click();
      // The gateway names the authorization server's host before the browser goes there.
      await page.getByRole('link', { name: `Continue to ${new URL(oauth.url).host}` }).click();
      // The authorization server consents at once and sends the browser to the gateway's callback.
      await page.waitForURL(/\/api\/v1\/mcp\/oauth\/callback/);
      await page.getByText('Signed in to tracker: 1 tool').waitFor();
      await page.getByRole('link', { name: 'Back to DataAgent' }).click();
      await tracker.and(page.locator('[data-status="connected"]')).waitFor();
      await tracker.locator('[data-testid="mcp-signed-in"]').waitFor();
      expect(resultOf(await chat(ALICE))?.status).toBe('success');

      await tracker.locator('[data-testid="mcp-sign-out"]').click();
      await tracker.and(page.locator('[data-status="needs_authorization"]')).waitFor();
      await tracker.locator('[data-testid="mcp-sign-in"]').waitFor();
    } finally {
      await browser.close();
    }
  }, 120_000);

  it('serves its client metadata document, and a callback with an unknown state changes nothing', async () => {
    const doc = await (await fetch(`${system.url}/api/v1/mcp/oauth/client-metadata.json`)).json();
    expect(doc).toMatchObject({ client_name: 'DataAgent', redirect_uris: [`${system.url}/api/v1/mcp/oauth/callback`], token_endpoint_auth_method: 'none' });
    const forged = await fetch(`${system.url}/api/v1/mcp/oauth/callback?code=abc&state=forged`);
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain('expired or was finished already');
  });
});
