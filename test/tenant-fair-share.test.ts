import type { Socket } from 'socket.io-client';
import { api, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat, sendMessage } from './support/event-waits.js';
import { TestSystem } from './support/system.js';

const OPERATOR = 'test-key-operator';
const ACME_ALICE = 'test-key-acme-alice';
const ACME_BOB = 'test-key-acme-bob';
const GLOBEX_GINA = 'test-key-globex-gina';
const KEYS = [`${OPERATOR}:ops:olga:operator`, `${ACME_ALICE}:acme:alice`, `${ACME_BOB}:acme:bob`, `${GLOBEX_GINA}:globex:gina`].join(',');
/** One worker's slots, as gateway and worker both read them: the default share of a tenant is half, 2. */
const WORKER_SLOTS = 4;
const CACHE_SECONDS = 0.3;
/**
 * Waits out the cache lifetime. Not a sync: what is under test is that a change applies within
 * that lifetime, without a restart, and every process judges a cached tenant's age by the clock on
 * its next read (TenantDirectory.policy), so once it has passed no stale read is left to wait for.
 */
const settle = () => new Promise((r) => setTimeout(r, CACHE_SECONDS * 1000 + 200));

/**
 * Multi-tenant mode is fair without any setting: a tenant may hold half of one worker's slots
 * (DATAAGENT_WORKER_CONCURRENCY), so its flood is answered 429 while another tenant's chat starts
 * at once; a tenant's own max_concurrent_runs still wins.
 */
describe('tenants share the workers by default', () => {
  let system: TestSystem;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    system = await TestSystem.start({
      workers: 1,
      env: { DATAAGENT_MULTI_TENANT: 'true', DATAAGENT_API_KEYS: KEYS, DATAAGENT_WORKER_CONCURRENCY: String(WORKER_SLOTS), DATAAGENT_TENANT_CACHE_SECONDS: String(CACHE_SECONDS) },
    });
  });
  afterAll(async () => {
    for (const socket of sockets) socket.disconnect();
    await system?.stop();
  });

  /** A run that holds its slot until cancelled, once a worker has started it. */
  async function startHangingRun(apiKey: string) {
    const socket = await connectChat(system.url, apiKey);
    sockets.push(socket);
    const events = new EventCollector(socket);
    const ack = await sendChat(socket, { message: '[[hang]]' });
    expect(ack).toMatchObject({ ok: true });
    await events.next((e) => e.run_id === ack.run_id && e.event_type === 'run_started');
    return {
      cancel: async () => {
        expect(await sendMessage(socket, 'cancel', { session_id: ack.session_id })).toMatchObject({ ok: true, cancelled: true });
        expect(await events.done(ack.run_id)).toMatchObject({ cancelled: true });
      },
    };
  }

  const chat = (apiKey: string, message: string) => api(system.url, 'POST', '/chat', { apiKey, body: { message } });

  it("answers one tenant's flood 429 past half of a worker's slots while another tenant's chat starts, and a tenant's own limit wins", async () => {
    const held = [await startHangingRun(ACME_ALICE), await startHangingRun(ACME_BOB)];

    const flood = await Promise.all(Array.from({ length: 5 }, (_, i) => chat(i % 2 ? ACME_ALICE : ACME_BOB, `flood ${i}`)));
    for (const answer of flood) {
      expect(answer).toMatchObject({ status: 429, body: { error_code: 'tenant_run_limit', details: { limit: 'concurrent_runs_per_tenant', max: WORKER_SLOTS / 2 } } });
      expect(answer.headers.get('retry-after')).toBe('5');
    }
    // The slots acme left free are globex's at once: its run starts while acme's still hold theirs.
    held.push(await startHangingRun(GLOBEX_GINA));
    expect((await chat(GLOBEX_GINA, 'globex goes on')).status).toBe(200);

    // A tenant's own max_concurrent_runs wins over the default share.
    expect((await api(system.url, 'POST', '/admin/tenants', { apiKey: OPERATOR, body: { tenant_id: 'acme', max_concurrent_runs: 3 } })).status).toBe(201);
    await settle();
    held.push(await startHangingRun(ACME_ALICE));
    expect(await chat(ACME_BOB, 'a fourth')).toMatchObject({ status: 429, body: { error_code: 'tenant_run_limit', details: { max: 3 } } });

    // Runs that end give their slots back.
    for (const run of held) await run.cancel();
    expect((await chat(ACME_BOB, 'acme again')).status).toBe(200);
  });
});
