import type { GatewayProcess } from './support/app-processes.js';
import { api, connectChat } from './support/chat-clients.js';
import { Redis } from 'ioredis';
import { EventCollector, sendChat } from './support/event-waits.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

/** Requests per minute per key and sessions per user, counted across two gateways: 429 with Retry-After past them. */
describe('quotas', () => {
  let system: TestSystem;
  let second: GatewayProcess;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_REQUESTS_PER_MINUTE: '8', DATAAGENT_MAX_SESSIONS_PER_USER: '2' }, extraGateways: [{}] });
    second = system.extraGateways[0]!;
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('answers 429 rate_limited with Retry-After once a key has made its requests of the minute, on any gateway and channel', async () => {
    const gateways = [system.url, second.url];
    for (let i = 0; i < 8; i++) expect((await api(gateways[i % 2]!, 'GET', '/sessions', { apiKey: OTHER_API_KEY })).status).toBe(200);
    const refused = await api(second.url, 'GET', '/sessions', { apiKey: OTHER_API_KEY });
    expect(refused).toMatchObject({ status: 429, body: { error_code: 'rate_limited', details: { limit: 'requests_per_minute', max: 8 } } });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // A socket message counts too.
    const socket = await connectChat(system.url, OTHER_API_KEY);
    try {
      expect(await sendChat(socket, { message: 'hi' })).toMatchObject({ ok: false, error_code: 'rate_limited' });
    } finally {
      socket.disconnect();
    }
    // Other keys have their own budget; health is not counted.
    expect((await api(system.url, 'GET', '/health')).status).toBe(200);
  });

  it('answers 429 session_limit for a session past the per-user maximum, on either gateway and by either route', async () => {
    const create = (url: string) => api(url, 'POST', '/sessions', { apiKey: TEST_API_KEY, body: {} });
    const first = await create(system.url);
    expect((await create(second.url)).status).toBe(201);
    const refused = await create(system.url);
    expect(refused).toMatchObject({ status: 429, body: { error_code: 'session_limit', details: { limit: 'sessions_per_user', max: 2 } } });
    expect(refused.headers.get('retry-after')).toBe('60');
    expect((await api(second.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { message: 'a third session' } })).body).toMatchObject({ error_code: 'session_limit' });
    expect((await api(system.url, 'DELETE', `/sessions/${first.body.session_id}`, { apiKey: TEST_API_KEY })).status).toBe(200);
    expect((await create(second.url)).status).toBe(201);
  });
});

describe('concurrent runs per tenant', () => {
  let system: TestSystem;
  const GLOBEX = 'test-key-globex-user';

  beforeAll(async () => {
    system = await TestSystem.start({
      workers: 1,
      env: { DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT: '1', DATAAGENT_API_KEYS: `${TEST_API_KEY}:acme:alice,${OTHER_API_KEY}:acme:bob,${GLOBEX}:globex:gina` },
    });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it("answers 429 tenant_run_limit to a tenant at its limit, while other tenants' runs go on, and admits again once its run ends", async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      // Alice's run streams for about 3 s.
      const ack = await sendChat(socket, { message: '[[chunks:30]] [[slow:100]]' });
      await events.next((e) => e.run_id === ack.run_id && e.event_type === 'run_started');
      const refused = await api(system.url, 'POST', '/chat', { apiKey: OTHER_API_KEY, body: { message: 'bob too' } });
      expect(refused).toMatchObject({ status: 429, body: { error_code: 'tenant_run_limit', details: { limit: 'concurrent_runs_per_tenant', max: 1 } } });
      expect(refused.headers.get('retry-after')).toBe('5');
      expect((await api(system.url, 'POST', '/chat', { apiKey: GLOBEX, body: { message: 'globex is not held up' } })).status).toBe(200);
      await events.done(ack.run_id);
      expect((await api(system.url, 'POST', '/chat', { apiKey: OTHER_API_KEY, body: { message: 'bob now' } })).status).toBe(200);
    } finally {
      socket.disconnect();
    }
  });

  it('admits exactly the limit out of a burst that reaches two gateways at once, and prunes a slot whose run ended unseen', async () => {
    const limit = 3;
    const burst = await TestSystem.start({
      workers: 1,
      env: { DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT: String(limit), DATAAGENT_API_KEYS: `${TEST_API_KEY}:initech:ian,${OTHER_API_KEY}:initech:ivy` },
      extraGateways: [{}],
    });
    const other = burst.extraGateways[0]!;
    const redis = new Redis(process.env.DATAAGENT_REDIS_URL!);
    const sockets = await Promise.all([connectChat(burst.url, TEST_API_KEY), connectChat(other.url, OTHER_API_KEY)]);
    try {
      // 40 chats at once, 20 through each gateway, each of about 3 s.
      const acks = await Promise.all(Array.from({ length: 40 }, (_, i) => sendChat(sockets[i % 2]!, { message: `[[chunks:30]] [[slow:100]] burst ${i}` })));
      const admitted = acks.filter((a) => a.ok);
      expect({ admitted: admitted.length, refused: acks.filter((a) => a.error_code === 'tenant_run_limit').length }).toEqual({ admitted: limit, refused: 40 - limit });
      // Both gateways count the slots they granted and refused, for the operator's dashboard.
      const counted = { granted: 0, refused: 0 };
      for (const url of [burst.url, other.url]) {
        const text = await (await fetch(`${url}/metrics`)).text();
        for (const [, result, n] of text.matchAll(/^dataagent_tenant_run_slot_requests_total\{result="(granted|refused)"\} (\d+)$/gm)) counted[result as keyof typeof counted] += Number(n);
      }
      expect(counted).toEqual({ granted: limit, refused: 40 - limit });

      // The admitted runs end and give their slots back.
      const slots = () => redis.zcard('da:tenant:{initech}:runs');
      for (const deadline = Date.now() + 30_000; (await slots()) > 0 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 100));
      expect(await slots()).toBe(0);
      const events = new EventCollector(sockets[1]!);
      // A slot left by a run that ended without giving it back (a worker that died at the wrong moment) is pruned once the tenant looks full.
      for (let i = 0; i < limit; i++) await redis.zadd('da:tenant:{initech}:runs', Date.now() - 60_000, `lost-run-${i}`);
      const ack = await sendChat(sockets[1]!, { message: 'after a lost slot' });
      expect(ack.ok).toBe(true);
      await events.done(ack.run_id);
      // The worker gives the slot back just after the run's done.
      for (const deadline = Date.now() + 10_000; (await slots()) > 0 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
      expect(await redis.zrange('da:tenant:{initech}:runs', 0, -1)).toEqual([]);
    } finally {
      for (const s of sockets) s.disconnect();
      redis.disconnect();
      await burst.stop();
    }
  }, 120_000);
});
