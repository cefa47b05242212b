import type { GatewayProcess } from './support/app-processes.js';
import { api, connectChat } from './support/chat-clients.js';
import { chatToDone, waitUntil } from './support/event-waits.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

const ADMIN = 'test-key-acme-admin';
const OTHER_ADMIN = 'test-key-globex-admin';
const OPERATOR = 'test-key-the-operator';

/**
 * API keys issued through the API, across two gateways: shown once, stored as hashes, usable on
 * every gateway and every channel, scoped to the issuer's tenant, revoked everywhere within
 * seconds.
 */
describe('issued API keys', () => {
  let system: TestSystem;
  let second: GatewayProcess;

  beforeAll(async () => {
    system = await TestSystem.start({
      workers: 1,
      env: { DATAAGENT_API_KEYS: `${TEST_API_KEY}:acme:alice,${ADMIN}:acme:carol:admin,${OTHER_ADMIN}:globex:dave:admin,${OPERATOR}:ops:olga:operator`, DATAAGENT_API_KEY_CACHE_SECONDS: '2' },
      extraGateways: [{}],
    });
    second = system.extraGateways[0]!;
  });
  afterAll(async () => {
    await system?.stop();
  });

  const issue = (body: unknown, key = ADMIN) => api(system.url, 'POST', '/admin/api-keys', { apiKey: key, body });

  it('issues a key shown once, that works on every gateway and channel, as its user and tenant', async () => {
    const created = await issue({ user_id: 'erin', role: 'user' });
    expect(created).toMatchObject({
      status: 201,
      body: { key_id: expect.any(String), key: expect.stringMatching(/^da_[A-Za-z0-9_-]{43}$/), tenant_id: 'acme', user_id: 'erin', role: 'user', created_by: 'acme/carol', revoked_at: null },
    });
    const { key, prefix } = created.body as { key: string; prefix: string };
    expect(key.startsWith(prefix)).toBe(true);
    // Listed without the key.
    const listed = (await api(system.url, 'GET', '/admin/api-keys', { apiKey: ADMIN })).body.api_keys as Array<Record<string, unknown>>;
    expect(listed.find((k) => k.key_id === created.body.key_id)).toMatchObject({ prefix, user_id: 'erin' });
    expect(JSON.stringify(listed)).not.toContain(key);

    for (const url of [system.url, second.url]) expect((await api(url, 'GET', '/sessions', { apiKey: key })).status).toBe(200);
    const run = await chatToDone(second.url, key, 'hello from erin');
    const session = String(run[0]!.session_id);
    // Erin's session is erin's: alice (same tenant) does not see it.
    expect((await api(system.url, 'GET', `/sessions/${session}`, { apiKey: key })).status).toBe(200);
    expect((await api(system.url, 'GET', `/sessions/${session}`, { apiKey: TEST_API_KEY })).status).toBe(404);
    await expect(connectChat(system.url, key).then((s) => (s.disconnect(), 'connected'))).resolves.toBe('connected');
  });

  it('keeps admins to their tenant and its user and admin keys; operators reach every tenant', async () => {
    expect((await issue({ user_id: 'x' }, TEST_API_KEY)).body).toMatchObject({ error_code: 'admin_required' });
    expect((await issue({ user_id: 'x', tenant_id: 'globex' })).body).toMatchObject({ error_code: 'operator_required' });
    expect((await issue({ user_id: 'x', role: 'operator' })).body).toMatchObject({ error_code: 'operator_required' });
    expect((await issue({ user_id: 'has space' })).status).toBe(422);
    expect((await issue({ user_id: 'x', expires_at: '2001-01-01T00:00:00Z' })).status).toBe(422);

    const globex = await issue({ user_id: 'gina', tenant_id: 'globex', role: 'admin' }, OPERATOR);
    expect(globex.body).toMatchObject({ tenant_id: 'globex', user_id: 'gina', role: 'admin', created_by: 'ops/olga' });
    // acme's admin neither sees nor revokes it.
    const acmeList = (await api(system.url, 'GET', '/admin/api-keys?limit=1000', { apiKey: ADMIN })).body.api_keys as Array<{ key_id: string; tenant_id: string }>;
    expect(acmeList.every((k) => k.tenant_id === 'acme')).toBe(true);
    expect((await api(system.url, 'GET', '/admin/api-keys?tenant_id=globex', { apiKey: ADMIN })).status).toBe(403);
    expect((await api(system.url, 'DELETE', `/admin/api-keys/${globex.body.key_id}`, { apiKey: ADMIN })).status).toBe(404);
    const opList = (await api(system.url, 'GET', '/admin/api-keys?tenant_id=globex', { apiKey: OPERATOR })).body.api_keys as Array<{ key_id: string }>;
    expect(opList.map((k) => k.key_id)).toContain(globex.body.key_id);
    // The new globex admin manages globex, as one.
    expect((await api(system.url, 'GET', '/admin/api-keys', { apiKey: globex.body.key })).body.api_keys.map((k: { key_id: string }) => k.key_id)).toContain(globex.body.key_id);
  });

  it('stops a revoked key on every gateway within seconds', async () => {
    const created = await issue({ user_id: 'frank' });
    const key = created.body.key as string;
    // Both gateways have it cached.
    for (const url of [system.url, second.url]) expect((await api(url, 'GET', '/sessions', { apiKey: key })).status).toBe(200);
    const revokedAt = Date.now();
    expect(await api(system.url, 'DELETE', `/admin/api-keys/${created.body.key_id}`, { apiKey: ADMIN })).toMatchObject({ status: 200, body: { revoked: true } });
    const stoppedAfter: number[] = [];
    for (const url of [system.url, second.url]) {
      // Within the key cache's 2 s: asked until refused, with a deadline past it.
      await waitUntil(async () => (await api(url, 'GET', '/sessions', { apiKey: key })).status === 401, 10_000);
      stoppedAfter.push(Date.now() - revokedAt);
    }
    process.stderr.write(`[figure] revoked key refused after ${stoppedAfter.join(' ms and ')} ms (gateway that revoked, other gateway)\n`);
    expect((await api(system.url, 'GET', '/admin/api-keys?limit=1000', { apiKey: ADMIN })).body.api_keys.find((k: { key_id: string }) => k.key_id === created.body.key_id).revoked_at).not.toBeNull();
    // Never in a log line.
    expect([...system.gateway.output, ...second.output].join('\n')).not.toContain(key);
  });
});
