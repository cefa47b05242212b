import type { GatewayProcess } from './support/app-processes.js';
import { api } from './support/chat-clients.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

describe('gateway settings: CORS, disabled auth, session expiry', () => {
  let system: TestSystem;
  let open: GatewayProcess;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_CORS_ORIGINS: 'http://app.test', DATAAGENT_SESSION_TIMEOUT: '2' }, extraGateways: [{ DATAAGENT_AUTH_DISABLED: 'true' }] });
    open = system.extraGateways[0]!;
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('allows only the configured origins', async () => {
    const preflight = (origin: string) =>
      fetch(`${system.url}/api/v1/chat`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-api-key' } });
    expect((await preflight('http://app.test')).headers.get('access-control-allow-origin')).toBe('http://app.test');
    expect((await preflight('http://evil.test')).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('serves everyone as one anonymous caller when auth is disabled', async () => {
    const res = await api(open.url, 'POST', '/chat', { body: { message: 'no key needed' } });
    expect(res.status).toBe(200);
    const sessions = await api(open.url, 'GET', '/sessions');
    expect(sessions.body.sessions.map((s: { session_id: string }) => s.session_id)).toContain(res.body.session_id);
  });

  it('deletes sessions idle for longer than DATAAGENT_SESSION_TIMEOUT', async () => {
    const { body } = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { message: 'short-lived' } });
    expect((await api(system.url, 'GET', `/sessions/${body.session_id}`, { apiKey: TEST_API_KEY })).status).toBe(200);
    const deadline = Date.now() + 15_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await api(system.url, 'GET', `/sessions/${body.session_id}`, { apiKey: TEST_API_KEY })).status;
    }
    expect(status).toBe(404);
  });
});
