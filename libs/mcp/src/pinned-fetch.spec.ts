import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { checkOutboundUrl, type Resolver } from '#core/tools/builtin/net/outbound-guard.js';
import { startMcpHttpServer, type McpHttpServer } from '#test/support/mcp-http-server.js';
import { McpConnection, McpUnavailableError, type UrlCheck } from './mcp-connection.js';

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
