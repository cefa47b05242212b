import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { checkOutboundUrl, type Resolver } from '#core/tools/builtin/net/outbound-guard.js';
import { startMcpHttpServer, type McpHttpServer } from '#test/support/mcp-http-server.js';
import { McpConnection, McpUnavailableError, type UrlCheck } from './mcp-connection.js';
import { pinnedFetch, policyFetch } from './pinned-fetch.js';

/**
 * DNS rebinding against a remote MCP server, all on loopback: "localhost" is the server's name.
 * The real server listens on 127.0.0.2; the "internal" service on 127.0.0.1, the same port, is
 * where the system's resolver sends "localhost". The fake resolver the outbound check uses answers
 * 127.0.0.2 first (checked and allowlisted) and 127.0.0.1 after that: the rebinding. A connection
 * that looked the name up again for its requests would reach the internal service.
 */
describe('a remote MCP connection is pinned to the address its check approved', () => {
  let server: McpHttpServer;
  let internal: Server;
  let internalHits: string[];

  async function start(transport: 'streamable-http' | 'sse') {
    server = await startMcpHttpServer({ transport, host: '127.0.0.2', tools: [{ name: 'echo', run: (args) => ({ content: [{ type: 'text', text: `Echo: ${String(args.message)}` }] }) }] });
    internalHits = [];
    internal = createServer((req, res) => {
      internalHits.push(`${req.method} ${req.url}`);
      res.writeHead(500).end('internal');
    });
    internal.listen(server.port, '127.0.0.1');
    await once(internal, 'listening');
  }

  afterEach(async () => {
    internal?.closeAllConnections();
    await new Promise((resolve) => internal?.close(resolve));
    await server?.stop();
  });

  /** A check whose first DNS answer is the server and every later one the internal service. */
  function rebindingCheck(): { checkUrl: (url: string) => Promise<UrlCheck>; lookups: () => number } {
    let lookups = 0;
    const resolver: Resolver = async () => (++lookups === 1 ? ['127.0.0.2'] : ['127.0.0.1']);
    return { checkUrl: (url) => checkOutboundUrl(url, { allowlist: ['127.0.0.2'], resolver }), lookups: () => lookups };
  }

  for (const transport of ['streamable-http', 'sse'] as const) {
    it(`${transport}: every request goes to the checked address; a reconnect is checked again and refused`, async () => {
      await start(transport);
      const { checkUrl, lookups } = rebindingCheck();
      const url = server.url.replace('127.0.0.2', 'localhost');
      const connection = new McpConnection({ name: 'pinned', transport, url }, { connectTimeoutMs: 10_000, checkUrl });
      try {
        await connection.connect();
        for (const message of ['one', 'two', 'three']) {
          const result = await connection.callTool('echo', { message }, { signal: new AbortController().signal, timeoutMs: 10_000 });
          expect(result.content).toEqual([{ type: 'text', text: `Echo: ${message}` }]);
        }
        expect(lookups()).toBe(1);
        expect(internalHits).toEqual([]);
        expect(server.requests.length).toBeGreaterThanOrEqual(4);

        await connection.close();
        const refused = await connection.connect().then(() => null, (err: unknown) => err);
        expect(refused).toBeInstanceOf(McpUnavailableError);
        expect((refused as Error).message).toContain('localhost (127.0.0.1)');
        expect(internalHits).toEqual([]);
      } finally {
        await connection.close();
      }
    });
  }
});

/**
 * Redirects towards a loopback port nobody allowlisted: the MCP server's own origin is allowed,
 * the "internal" service's port is not. Whatever follows the redirect must not open a connection
 * to it: a pinned transport refuses another origin, a policy fetch checks each hop.
 */
describe('a redirect cannot leave the checked origin', () => {
  let allowed: Server;
  let internal: Server;
  let internalConnections: number;
  let allowedPort: number;
  let internalPort: number;

  beforeAll(async () => {
    internalConnections = 0;
    internal = createServer((_req, res) => res.end('internal'));
    internal.on('connection', () => internalConnections++);
    internal.listen(0, '127.0.0.1');
    await once(internal, 'listening');
    internalPort = (internal.address() as { port: number }).port;
    allowed = createServer((req, res) => {
      if (req.url === '/start') res.writeHead(302, { location: '/next' }).end();
      else if (req.url === '/next') res.writeHead(307, { location: `http://127.0.0.1:${internalPort}/` }).end();
      else if (req.url === '/by-name') res.writeHead(302, { location: `http://localhost:${internalPort}/` }).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ landed: req.url, method: req.method }));
    });
    allowed.listen(0, '127.0.0.1');
    await once(allowed, 'listening');
    allowedPort = (allowed.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const server of [allowed, internal]) {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
    }
  });

  const check = (url: string) => checkOutboundUrl(url, { allowlist: [`127.0.0.1:${allowedPort}`] });

  it('policyFetch follows a redirect on the allowed origin and refuses the hop to the other port, which sees no connection', async () => {
    const fetch = policyFetch(check);
    const same = await fetch(`http://127.0.0.1:${allowedPort}/to-self`, { method: 'GET' });
    expect(await same.json()).toEqual({ landed: '/to-self', method: 'GET' });
    await expect(fetch(`http://127.0.0.1:${allowedPort}/start`, { method: 'POST', body: '{}' })).rejects.toMatchObject({ code: 'refused', message: expect.stringContaining(`port ${internalPort}`) });
    await expect(fetch(`http://127.0.0.1:${allowedPort}/by-name`)).rejects.toMatchObject({ code: 'refused' });
    expect(internalConnections).toBe(0);
  });

  it('policyFetch stops after its hop limit', async () => {
    await expect(policyFetch(check, 1)(`http://127.0.0.1:${allowedPort}/start`)).rejects.toMatchObject({ code: 'too_many_redirects' });
    expect(internalConnections).toBe(0);
  });

  it("a pinned transport's fetch fails on a redirect to another port of the same host, which sees no connection", async () => {
    const checked = await check(`http://127.0.0.1:${allowedPort}/start`);
    if (!checked.ok) throw new Error(checked.reason);
    const pinned = pinnedFetch(checked);
    try {
      await expect(pinned.fetch(`http://127.0.0.1:${allowedPort}/start`, { method: 'POST', body: '{}' })).rejects.toThrow();
      await expect(pinned.fetch(`http://127.0.0.1:${allowedPort}/by-name`)).rejects.toThrow();
      expect(internalConnections).toBe(0);
    } finally {
      await pinned.close();
    }
  });
});
