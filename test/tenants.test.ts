import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventDict } from '#core/events/execution-event.js';
import type { GatewayProcess } from './support/app-processes.js';
import { api, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat } from './support/event-waits.js';
import { FAULT_SERVER, killRecordedServers } from './support/mcp-fault-servers.js';
import { TestSystem } from './support/system.js';

const OPERATOR = 'test-key-operator';
const ACME_ADMIN = 'test-key-acme-admin';
const ACME_ALICE = 'test-key-acme-alice';
const ACME_BOB = 'test-key-acme-bob';
const GLOBEX_GINA = 'test-key-globex-gina';
const KEYS = [`${OPERATOR}:ops:olga:operator`, `${ACME_ADMIN}:acme:carol:admin`, `${ACME_ALICE}:acme:alice`, `${ACME_BOB}:acme:bob`, `${GLOBEX_GINA}:globex:gina`].join(',');
/** How long a gateway or worker trusts what it read of a tenant (DATAAGENT_TENANT_CACHE_SECONDS). */
const CACHE_SECONDS = 0.3;
/**
 * Waits out the cache lifetime. Not a sync: what is under test is that a change applies within
 * that lifetime, without a restart, and every process judges a cached tenant's age by the clock on
 * its next read (TenantDirectory.policy), so once it has passed no stale read is left to wait for.
 */
const settle = () => new Promise((r) => setTimeout(r, CACHE_SECONDS * 1000 + 200));

/**
 * Tenants in multi-tenant mode: operators manage them over REST, each tenant's own limits answer
 * 429 on every gateway, and its feature switches keep tools and MCP servers from its runs.
 */
describe('tenants', () => {
  let system: TestSystem;
  let second: GatewayProcess;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-tenants-'));
    const mcpConfig = join(dir, 'mcp.json');
    writeFileSync(mcpConfig, JSON.stringify({ servers: [{ name: 'shop', command: process.execPath, args: [FAULT_SERVER, 'shop', '--record', join(dir, 'shop.jsonl')] }] }));
    system = await TestSystem.start({
      workers: 1,
      // The operator's shop server records its host pid for killRecordedServers, which a sandbox's own PID namespace would hide; test/sandbox-red-team.test.ts covers sandboxed servers.
      env: { DATAAGENT_SANDBOX: 'none', DATAAGENT_MULTI_TENANT: 'true', DATAAGENT_TENANT_CACHE_SECONDS: String(CACHE_SECONDS), DATAAGENT_API_KEYS: KEYS, DATAAGENT_MCP_CONFIG: mcpConfig, DATAAGENT_MCP_TOOL_INJECTION: 'all', DATAAGENT_OUTBOUND_ALLOWLIST: '127.0.0.1', DATAAGENT_HITL_TOOLS: 'http_request' },
      extraGateways: [{}],
    });
    second = system.extraGateways[0]!;
  });
  afterAll(async () => {
    await system?.stop();
    if (dir) {
      killRecordedServers(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const operator = (method: string, path: string, body?: unknown) => api(system.url, method, `/admin/tenants${path}`, { apiKey: OPERATOR, ...(body === undefined ? {} : { body }) });

  /** One chat over Socket.IO to its done: the run's events and the tools the model was offered in its first request. */
  async function chat(apiKey: string, message: string): Promise<{ run: EventDict[]; offered: string[] }> {
    const socket = await connectChat(system.url, apiKey);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message });
      expect(ack.ok).toBe(true);
      await events.done(ack.run_id, 60_000);
      const request = system.llm.requests.find((r) => (r.body.messages ?? []).some((m) => m.role === 'user' && m.content === message))!;
      return { run: events.ofRun(ack.run_id), offered: (request.body.tools ?? []).map((t) => t.function.name) };
    } finally {
      socket.disconnect();
    }
  }

  it('lets only operators manage tenants: 403 for an admin or a user, on every route', async () => {
    for (const key of [ACME_ADMIN, ACME_ALICE]) {
      for (const [method, path, body] of [
        ['POST', '', { tenant_id: 'acme' }],
        ['GET', '', undefined],
        ['GET', '/acme', undefined],
        ['PUT', '/acme', { max_users: 1 }],
        ['DELETE', '/acme', undefined],
      ] as const) {
        const answer = await api(system.url, method, `/admin/tenants${path}`, { apiKey: key, ...(body ? { body } : {}) });
        expect({ key, method, path, status: answer.status, code: answer.body?.error_code }).toEqual({ key, method, path, status: 403, code: 'operator_required' });
      }
    }
  });

  it('creates, reads, lists, changes and deletes a tenant, and names each bad field', async () => {
    const created = await operator('POST', '', { tenant_id: 'initech', name: 'Initech', max_users: 3, workspace_quota: '5MB', features_enabled: { tools: ['write_todos'], shell: false } });
    expect(created).toMatchObject({
      status: 201,
      body: { tenant_id: 'initech', name: 'Initech', max_users: 3, workspace_quota: 5 * 1024 ** 2, max_sessions_per_user: null, features_enabled: { tools: ['write_todos'], shell: false } },
    });
    expect((await operator('POST', '', { tenant_id: 'initech' })).body).toMatchObject({ error_code: 'tenant_exists' });
    expect((await operator('GET', '/initech')).body).toMatchObject({ tenant_id: 'initech', max_users: 3 });
    expect((await operator('GET', '')).body.tenants.map((t: { tenant_id: string }) => t.tenant_id)).toContain('initech');

    // A PUT changes what it names; null puts a limit back to the deployment's default.
    const changed = await api(second.url, 'PUT', '/admin/tenants/initech', { apiKey: OPERATOR, body: { max_users: null, requests_per_minute: 100 } });
    expect(changed.body).toMatchObject({ name: 'Initech', max_users: null, requests_per_minute: 100, workspace_quota: 5 * 1024 ** 2 });

    const bad = await operator('POST', '', { tenant_id: 'bad id', max_users: -1, workspace_quota: 'lots', features_enabled: { tools: 'all' } });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.details.fields).sort()).toEqual(['features_enabled.tools', 'max_users', 'tenant_id']);
    expect(await operator('PUT', '/initech', { workspace_quota: 'lots' })).toMatchObject({ status: 422, body: { details: { fields: { workspace_quota: [expect.any(String)] } } } });
    expect((await operator('PUT', '/nobody', { max_users: 1 })).status).toBe(404);

    // Deleting a tenant revokes the keys issued for it.
    const key = await api(system.url, 'POST', '/admin/api-keys', { apiKey: OPERATOR, body: { user_id: 'ian', tenant_id: 'initech' } });
    expect((await api(system.url, 'GET', '/sessions', { apiKey: key.body.key })).status).toBe(200);
    expect((await operator('DELETE', '/initech')).body).toEqual({ tenant_id: 'initech', deleted: true, revoked_keys: 1 });
    expect((await api(second.url, 'GET', '/sessions', { apiKey: key.body.key })).status).toBe(401);
    expect((await operator('GET', '/initech')).status).toBe(404);
  });

  it("applies each tenant's own limits on every gateway: 429 with Retry-After naming the limit, other tenants untouched", async () => {
    expect((await operator('POST', '', { tenant_id: 'acme', max_sessions_per_user: 1, max_mcp_servers: 1, max_users: 3, requests_per_minute: 1000 })).status).toBe(201);
    await settle();

    // Sessions per user.
    expect((await api(system.url, 'POST', '/sessions', { apiKey: ACME_BOB, body: {} })).status).toBe(201);
    const sessions = await api(second.url, 'POST', '/sessions', { apiKey: ACME_BOB, body: {} });
    expect(sessions).toMatchObject({ status: 429, body: { error_code: 'session_limit', details: { limit: 'sessions_per_user', max: 1 } } });
    expect(sessions.headers.get('retry-after')).toBe('60');
    expect((await api(second.url, 'POST', '/sessions', { apiKey: GLOBEX_GINA, body: {} })).status).toBe(201);
    expect((await api(second.url, 'POST', '/sessions', { apiKey: GLOBEX_GINA, body: {} })).status).toBe(201);

    // MCP servers per user.
    const server = (name: string) => ({ name, url: 'http://127.0.0.1:9/mcp' });
    expect((await api(system.url, 'POST', '/users/bob/mcp-servers', { apiKey: ACME_BOB, body: server('one') })).status).toBe(201);
    const servers = await api(second.url, 'POST', '/users/bob/mcp-servers', { apiKey: ACME_BOB, body: server('two') });
    expect(servers).toMatchObject({ status: 429, body: { error_code: 'mcp_server_limit', details: { limit: 'mcp_servers_per_user', max: 1 } } });
    expect(Number(servers.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await api(second.url, 'GET', '/users/bob/mcp-servers', { apiKey: ACME_BOB })).body.max_servers).toBe(1);

    // Users per tenant: carol, alice and bob hold env keys, which are not counted; issued keys are.
    for (const user of ['u1', 'u2', 'u3']) expect((await api(system.url, 'POST', '/admin/api-keys', { apiKey: ACME_ADMIN, body: { user_id: user } })).status).toBe(201);
    expect((await api(system.url, 'POST', '/admin/api-keys', { apiKey: ACME_ADMIN, body: { user_id: 'u1' } })).status).toBe(201);
    const users = await api(second.url, 'POST', '/admin/api-keys', { apiKey: ACME_ADMIN, body: { user_id: 'u4' } });
    expect(users).toMatchObject({ status: 429, body: { error_code: 'user_limit', details: { limit: 'users_per_tenant', max: 3 } } });

    // Requests per minute per key, from the tenant's row, changed while the gateways run.
    expect((await operator('PUT', '/acme', { requests_per_minute: 3 })).status).toBe(200);
    await settle();
    const gateways = [system.url, second.url];
    for (let i = 0; i < 3; i++) expect((await api(gateways[i % 2]!, 'GET', '/sessions', { apiKey: ACME_ALICE })).status).toBe(200);
    const rpm = await api(second.url, 'GET', '/sessions', { apiKey: ACME_ALICE });
    expect(rpm).toMatchObject({ status: 429, body: { error_code: 'rate_limited', details: { limit: 'requests_per_minute', max: 3 } } });
    expect(Number(rpm.headers.get('retry-after'))).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) expect((await api(system.url, 'GET', '/sessions', { apiKey: GLOBEX_GINA })).status).toBe(200);

    // Concurrent runs per tenant.
    expect((await operator('PUT', '/acme', { requests_per_minute: null, max_sessions_per_user: null, max_concurrent_runs: 1 })).status).toBe(200);
    await settle();
    const socket = await connectChat(system.url, ACME_BOB);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: '[[chunks:30]] [[slow:100]]' });
      await events.next((e) => e.run_id === ack.run_id && e.event_type === 'run_started');
      const runs = await api(second.url, 'POST', '/chat', { apiKey: ACME_ADMIN, body: { message: 'one more' } });
      expect(runs).toMatchObject({ status: 429, body: { error_code: 'tenant_run_limit', details: { limit: 'concurrent_runs_per_tenant', max: 1 } } });
      expect(runs.headers.get('retry-after')).toBe('5');
      expect((await api(second.url, 'POST', '/chat', { apiKey: GLOBEX_GINA, body: { message: 'globex goes on' } })).status).toBe(200);
      await events.done(ack.run_id);
    } finally {
      socket.disconnect();
    }
    // Workspace bytes: a write past the tenant's quota is refused to the model, which says so.
    expect((await operator('PUT', '/acme', { max_concurrent_runs: null, max_users: null, max_mcp_servers: null, workspace_quota: 64 })).status).toBe(200);
    await settle();
    const write = (apiKey: string, marker: string) => chat(apiKey, `[[tool:write_file ${JSON.stringify({ path: 'files/big.txt', content: 'x'.repeat(200) })}]] ${marker}`);
    const refused = (await write(ACME_ALICE, 'acme-write')).run.find((e) => e.event_type === 'tool_result')!;
    expect(refused.status).toBe('error');
    expect(JSON.stringify(refused.result)).toContain('quota');
    expect((await write(GLOBEX_GINA, 'globex-write')).run.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'success' });
    expect((await operator('PUT', '/acme', { workspace_quota: null })).status).toBe(200);
  });

  it("keeps switched-off tools and MCP servers out of a tenant's runs, refuses a call to them anyway, and leaves other tenants theirs", async () => {
    expect((await operator('POST', '', { tenant_id: 'globex', features_enabled: { tools: ['write_todos', 'read_file'], mcp_servers: [], skills: [] } })).status).toBe(201);
    await settle();

    const acme = await chat(ACME_ALICE, 'acme: what can you do?');
    expect(acme.offered).toEqual(expect.arrayContaining(['write_todos', 'http_request', 'shop__get_order']));

    const globex = await chat(GLOBEX_GINA, 'globex: what can you do?');
    expect(globex.offered.sort()).toEqual(['read_file', 'write_todos']);

    // A model that names a switched-off tool anyway gets a refusal, and nothing runs.
    const http = await chat(GLOBEX_GINA, '[[tool:http_request {"url":"http://127.0.0.1:9/"}]] globex-http');
    expect(http.run.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'error', result: { details: { error_code: 'feature_disabled', feature: 'tool', name: 'http_request' } } });
    const mcp = await chat(GLOBEX_GINA, '[[tool:shop__get_order {"orderId":"A-1"}]] globex-mcp');
    expect(mcp.run.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'error', result: { details: { error_code: 'feature_disabled', feature: 'mcp_server', name: 'shop' } } });
    expect(mcp.run.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });

    // Switched on again: offered within the cache time, without a restart.
    expect((await operator('PUT', '/globex', { features_enabled: null })).status).toBe(200);
    await settle();
    expect((await chat(GLOBEX_GINA, 'globex: and now?')).offered).toEqual(expect.arrayContaining(['http_request', 'shop__get_order']));
  });
});

describe('tenants without multi-tenant mode', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 0, env: { DATAAGENT_API_KEYS: `${OPERATOR}:ops:olga:operator,${ACME_ADMIN}:acme:carol:admin` } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('says how to turn it on rather than storing settings that would not apply', async () => {
    const answer = await api(system.url, 'POST', '/admin/tenants', { apiKey: OPERATOR, body: { tenant_id: 'acme' } });
    expect(answer).toMatchObject({ status: 409, body: { error_code: 'multi_tenant_off' } });
    expect(answer.body.message).toContain('DATAAGENT_MULTI_TENANT=true');
    expect((await api(system.url, 'GET', '/admin/tenants', { apiKey: ACME_ADMIN })).status).toBe(403);
  });
});
