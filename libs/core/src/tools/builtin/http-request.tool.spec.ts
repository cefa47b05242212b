import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeToolContext } from '#test/support/fake-tool-context.js';
import { createHttpRequestTool, requiresApproval } from './http-request.tool.js';

const ctx = fakeToolContext();

describe('http_request tool', () => {
  let server: Server;
  let port: number;
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push(`${req.method} ${req.url}`);
        if (req.url === '/missing') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('nope');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, body, type: req.headers['content-type'] ?? null, auth: req.headers['x-token'] ?? null }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => {
    seen.length = 0;
  });

  it('needs approval for everything but GET and HEAD', () => {
    expect(requiresApproval({ url: 'x' })).toBe(false);
    expect(requiresApproval({ url: 'x', method: 'get' })).toBe(false);
    expect(requiresApproval({ url: 'x', method: 'HEAD' })).toBe(false);
    for (const method of ['POST', 'put', 'PATCH', 'DELETE', 'OPTIONS']) expect(requiresApproval({ url: 'x', method })).toBe(true);
    const tool = createHttpRequestTool();
    expect(tool.sensitive).toBeFalsy(); // a GET runs without asking
    expect(tool.requiresApproval({ url: 'x', method: 'POST' })).toBe(true);
    expect(tool.requiresApproval({ url: 'x' })).toBe(false);
  });

  it('reaches an allowlisted 127.0.0.1 server and returns the parsed JSON', async () => {
    const tool = createHttpRequestTool({ allowlist: [`127.0.0.1:${port}`] });
    const result = await tool.execute({ url: `http://127.0.0.1:${port}/items`, method: 'post', headers: { 'x-token': 'abc', host: 'evil' }, body: { a: 1 } }, ctx);
    expect(result).toMatchObject({
      success: true,
      output: { status_code: 200, url: `http://127.0.0.1:${port}/items`, content: { method: 'POST', body: '{"a":1}', type: 'application/json', auth: 'abc' } },
    });
  });

  it('reports HTTP errors with the response', async () => {
    const tool = createHttpRequestTool({ allowlist: [`127.0.0.1:${port}`] });
    await expect(tool.execute({ url: `http://127.0.0.1:${port}/missing` }, ctx)).resolves.toMatchObject({ success: false, error: 'HTTP 404 Not Found', output: { status_code: 404, content: 'nope' } });
  });

  it('refuses the same server when it is not allowlisted, and the server sees nothing', async () => {
    for (const allowlist of [[], [`127.0.0.1:${port + 1}`], ['10.0.0.0/8']]) {
      const result = await createHttpRequestTool({ allowlist }).execute({ url: `http://127.0.0.1:${port}/items` }, ctx);
      expect(result).toMatchObject({ success: false, output: { error_code: 'refused' }, error: expect.stringContaining('refused') });
    }
    const viaLocalhost = await createHttpRequestTool().execute({ url: `http://localhost:${port}/items` }, ctx);
    expect(viaLocalhost).toMatchObject({ success: false, output: { error_code: 'refused' } });
    expect(seen).toEqual([]);
  });
});
