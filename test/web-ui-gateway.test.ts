import type { GatewayProcess } from './support/app-processes.js';
import { api } from './support/chat-clients.js';
import { rawRequest } from './support/raw-http.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

/** Relative and absolute module specifiers of `import … from '…'` and `import '…'`. */
const IMPORTS = /\bimport\s*(?:[^'"()]*?\bfrom\s*)?['"]([^'"]+)['"]/g;

/**
 * What the gateway does for its web UI (issue 11), without a browser: the page and every module
 * it loads come from the gateway itself with a strict CSP; `/me` tells a key's owner who they
 * are; sessions can be renamed. The browser tests (web-ui.test.ts) drive the UI itself.
 */
describe('the gateway serving its web UI', () => {
  let system: TestSystem;
  let open: GatewayProcess;

  beforeAll(async () => {
    // The second gateway has the quick start's setting: no keys at all.
    system = await TestSystem.start({ workers: 0, extraGateways: [{ DATAAGENT_API_KEYS: '', DATAAGENT_AUTH_DISABLED: 'true' }] });
    open = system.extraGateways[0]!;
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('serves the page at / with scripts from itself only and no inline script', async () => {
    const res = await fetch(`${system.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toMatch(/unsafe-(inline|eval)/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const page = await res.text();
    expect(page).toContain('<script type="module" src="/ui/app.js"></script>');
    // Every <script> has a src: the CSP would refuse an inline one anyway.
    expect(page.match(/<script\b[^>]*>/g)?.every((tag) => /\bsrc=/.test(tag))).toBe(true);
  });

  it('serves every module the page imports, the libraries and the Socket.IO client included, as JavaScript', async () => {
    const seen = new Set<string>();
    const queue = ['/ui/app.js'];
    while (queue.length > 0) {
      const path = queue.shift()!;
      if (seen.has(path)) continue;
      seen.add(path);
      const res = await fetch(`${system.url}${path}`);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(res.headers.get('content-type')).toMatch(/javascript/);
      const source = await res.text();
      for (const [, specifier] of source.matchAll(IMPORTS)) {
        // Bare specifiers would need an import map, which the CSP (no inline script) rules out.
        expect(specifier).toMatch(/^(\.{1,2})?\//);
        queue.push(new URL(specifier, `http://ui${path}`).pathname);
      }
    }
    expect([...seen]).toEqual(expect.arrayContaining(['/ui/vendor/preact.js', '/ui/vendor/marked.js', '/ui/vendor/purify.js', '/socket.io/socket.io.esm.min.js', '/ui/chat-store.js', '/ui/mcp-tab.js']));
    for (const asset of ['/ui/style.css', '/ui/icon.svg']) expect((await fetch(`${system.url}${asset}`)).status).toBe(200);
  });

  it('serves nothing else from its folder or node_modules', async () => {
    for (const path of ['/ui/run-view.spec.ts', '/ui/run-view.d.ts', '/ui/index.html.bak', '/ui/%2e%2e%2fpackage.json', '/ui/vendor/socket.io.js', '/ui/vendor/..%2f..%2fpackage.json', '/node_modules/marked/package.json']) {
      const res = await fetch(`${system.url}${path}`);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(await res.json()).toMatchObject({ error_code: 'not_found' });
    }
  });

  it('keeps the page behind the origin policy when authentication is off', async () => {
    expect((await fetch(`${open.url}/`)).status).toBe(200);
    // A rebound DNS name reaching the loopback gateway gets nothing, the page included.
    const rebound = await rawRequest(open.url, 'GET', '/', { host: 'attacker.example' });
    expect(rebound).toMatchObject({ status: 403, body: expect.stringContaining('host_not_allowed') });
  });

  it('tells a caller who they are, and 401 without a valid key', async () => {
    expect(await api(system.url, 'GET', '/me', { apiKey: TEST_API_KEY })).toMatchObject({
      status: 200,
      body: { tenant_id: 'acme', user_id: 'alice', role: 'user', auth_disabled: false },
    });
    expect((await api(system.url, 'GET', '/me', { apiKey: OTHER_API_KEY })).body).toMatchObject({ user_id: 'bob' });
    expect(await api(system.url, 'GET', '/me')).toMatchObject({ status: 401, body: { error_code: 'missing_api_key' } });
    expect(await api(system.url, 'GET', '/me', { apiKey: 'wrong' })).toMatchObject({ status: 401, body: { error_code: 'invalid_api_key' } });
    // Without authentication everybody is the anonymous local user.
    expect((await api(open.url, 'GET', '/me')).body).toEqual({ tenant_id: 'default', user_id: 'anonymous', role: 'user', auth_disabled: true });
  });

  it('renames a session for its owner only', async () => {
    const created = await api(system.url, 'POST', '/sessions', { apiKey: TEST_API_KEY, body: { title: 'first name' } });
    const id = created.body.session_id as string;
    const renamed = await api(system.url, 'PATCH', `/sessions/${id}`, { apiKey: TEST_API_KEY, body: { title: '  Quarterly numbers ' } });
    expect(renamed).toMatchObject({ status: 200, body: { session_id: id, title: 'Quarterly numbers' } });
    const listed = (await api(system.url, 'GET', '/sessions', { apiKey: TEST_API_KEY })).body.sessions as Array<{ session_id: string; title: string }>;
    expect(listed.find((s) => s.session_id === id)?.title).toBe('Quarterly numbers');

    expect((await api(system.url, 'PATCH', `/sessions/${id}`, { apiKey: OTHER_API_KEY, body: { title: 'mine now' } })).status).toBe(404);
    expect((await api(system.url, 'PATCH', `/sessions/${id}`, { apiKey: TEST_API_KEY, body: { title: 'x'.repeat(201) } })).status).toBe(422);
    expect((await api(system.url, 'PATCH', `/sessions/${id}`, { apiKey: TEST_API_KEY, body: {} })).status).toBe(422);
    expect((await api(system.url, 'GET', `/sessions/${id}`, { apiKey: TEST_API_KEY })).body.title).toBe('Quarterly numbers');
  });
});
