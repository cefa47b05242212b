import type { GatewayProcess } from './support/app-processes.js';
import { TestBrowser } from './support/browser.js';
import { api } from './support/chat-clients.js';
import { TEST_API_KEY, TEST_API_KEYS, TestSystem } from './support/system.js';

const ADMIN_KEY = 'test-key-admin-carol';
const OPERATOR_KEY = 'test-key-operator-olga';

const basic = (key: string) => `Basic ${Buffer.from(`anyone:${key}`).toString('base64')}`;

/** Bull Board at /admin/queues (issue 13): off by default; on, for admins only, read-only. */
describe('the queue board', () => {
  let system: TestSystem;
  let board: GatewayProcess;
  let multiTenant: GatewayProcess;

  beforeAll(async () => {
    const keys = `${TEST_API_KEYS},${ADMIN_KEY}:acme:carol:admin,${OPERATOR_KEY}:ops:olga:operator`;
    system = await TestSystem.start({
      workers: 0,
      extraGateways: [
        { DATAAGENT_API_KEYS: keys, DATAAGENT_BULL_BOARD: 'true' },
        { DATAAGENT_API_KEYS: keys, DATAAGENT_BULL_BOARD: 'true', DATAAGENT_MULTI_TENANT: 'true' },
      ],
    });
    [board, multiTenant] = system.extraGateways as [GatewayProcess, GatewayProcess];
  });
  afterAll(async () => {
    await system?.stop();
  });

  const get = (base: string, path: string, headers: Record<string, string> = {}) => fetch(`${base}/admin/queues${path}`, { headers });

  it('is not there unless switched on', async () => {
    const res = await get(system.url, '', { 'x-api-key': TEST_API_KEY });
    expect(res.status).toBe(404);
  });

  it('asks for a key, refuses a user, and shows an admin the run queue', async () => {
    const none = await get(board.url, '');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    expect(await none.json()).toMatchObject({ error_code: 'missing_api_key' });
    expect((await get(board.url, '', { authorization: basic('not-a-key-at-all') })).status).toBe(401);
    // Nothing of the board is served before the key is checked, its API and assets included.
    expect((await get(board.url, '/api/queues')).status).toBe(401);
    for (const headers of [{ 'x-api-key': TEST_API_KEY }, { authorization: basic(TEST_API_KEY) }] as Array<Record<string, string>>) {
      const user = await get(board.url, '/api/queues', headers);
      expect(user.status).toBe(403);
      expect(await user.json()).toMatchObject({ error_code: 'admin_required' });
    }

    const queued = await api(system.url, 'POST', '/chat/stream', { apiKey: TEST_API_KEY, body: { message: 'waits in the queue' }, signal: AbortSignal.timeout(2_000) }).catch(() => null);
    void queued;
    for (const headers of [{ authorization: basic(ADMIN_KEY) }, { 'x-api-key': ADMIN_KEY }] as Array<Record<string, string>>) {
      const page = await get(board.url, '', headers);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    }
    const queues = await get(board.url, '/api/queues', { authorization: basic(ADMIN_KEY) });
    expect(queues.status).toBe(200);
    const { queues: list } = (await queues.json()) as { queues: Array<{ name: string; readOnlyMode: boolean; counts: Record<string, number> }> };
    expect(list).toEqual([expect.objectContaining({ name: system.env.DATAAGENT_QUEUE_NAME, readOnlyMode: true })]);
    expect(list[0].counts.waiting).toBeGreaterThanOrEqual(1);
  });

  it('changes nothing: the queue cannot be paused from it', async () => {
    const name = encodeURIComponent(String(system.env.DATAAGENT_QUEUE_NAME));
    const pause = await fetch(`${board.url}/admin/queues/api/queues/${name}/pause`, { method: 'PUT', headers: { authorization: basic(ADMIN_KEY) } });
    expect(pause.status).toBe(405);
    const queues = (await (await get(board.url, '/api/queues', { authorization: basic(ADMIN_KEY) })).json()) as { queues: Array<{ isPaused: boolean }> };
    expect(queues.queues[0].isPaused).toBe(false);
  });

  it('shows every tenant, so in multi-tenant mode only operators see it', async () => {
    const admin = await get(multiTenant.url, '/api/queues', { authorization: basic(ADMIN_KEY) });
    expect(admin.status).toBe(403);
    expect(await admin.json()).toMatchObject({ error_code: 'operator_required' });
    expect((await get(multiTenant.url, '/api/queues', { authorization: basic(OPERATOR_KEY) })).status).toBe(200);
  });

  it('renders in a browser signed in with the key, loading nothing from elsewhere', async () => {
    const browser = await TestBrowser.launch();
    try {
      const watched = await browser.open(board.url);
      await watched.page.setExtraHTTPHeaders({ authorization: basic(ADMIN_KEY) });
      await watched.page.goto('/admin/queues');
      await watched.page.getByText(String(system.env.DATAAGENT_QUEUE_NAME)).first().waitFor({ timeout: 30_000 });
      expect(watched.foreignRequests()).toEqual([]);
      expect(watched.unexpectedConsoleErrors()).toEqual([]);
      await watched.close();
    } finally {
      await browser.close();
    }
  });
});
