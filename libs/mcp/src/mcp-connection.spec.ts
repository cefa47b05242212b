import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import { FAULT_SERVER, startFaultHttp, type FaultHttpServer } from '#test/support/mcp-fault-servers.js';
import { startMcpHttpServer, type McpHttpServer } from '#test/support/mcp-http-server.js';
import { freePort } from '#test/support/mcp-servers.js';
import { McpConnection } from './mcp-connection.js';
import { McpMessageTooDeepError, McpMessageTooLargeError } from './message-limits.js';

const CAP = 64 * 1024;
const call = (connection: McpConnection, tool: string, args: Record<string, unknown>) => connection.callTool(tool, args, { signal: new AbortController().signal, timeoutMs: 20_000 });
const failure = (promise: Promise<unknown>) => promise.then(() => null, (err: unknown) => err);
const text = (result: { content?: Array<{ type: string; text?: string }> }) => result.content?.map((c) => c.text).join('');

/**
 * A connection reads every message within its cap and checks its depth before the SDK's client
 * uses it: an answer past either fails its call with an error that says so, and the connection
 * goes on where its stream can (stdio, streamable HTTP) or is closed where it cannot (legacy SSE).
 */
describe('McpConnection message limits', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'da-mcp-limits-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe('over stdio', () => {
    let connection: McpConnection;
    beforeAll(async () => {
      const config: McpServerConfig = { name: 'big', transport: 'stdio', command: process.execPath, args: [FAULT_SERVER, 'huge'] };
      connection = new McpConnection(config, { connectTimeoutMs: 15_000, maxMessageBytes: CAP });
      await connection.connect();
    });
    afterAll(() => connection.close());

    it('an answer past the cap fails its call, saying so, and the server stays usable', async () => {
      const pid = connection.pid;
      const err = await failure(call(connection, 'dump', { megabytes: 8 }));
      expect(err).toBeInstanceOf(McpMessageTooLargeError);
      expect((err as Error).message).toBe('MCP server big sent a message of more than 64 KiB (DATAAGENT_MCP_MAX_MESSAGE_BYTES)');
      // The rest of the 8 MiB line is dropped; the next line is the next answer.
      expect(text(await call(connection, 'echo', { message: 'after' }))).toBe('Echo: after');
      expect(connection.pid).toBe(pid);
    });

    it('structuredContent nested 10,000 deep fails its call, not the process', async () => {
      const err = await failure(call(connection, 'deep', { levels: 10_000 }));
      expect(err).toBeInstanceOf(McpMessageTooDeepError);
      expect((err as Error).message).toBe('MCP server big sent JSON nested more than 100 levels deep');
      expect(text(await call(connection, 'deep', { levels: 50 }))).toBe('deep');
    });
  });

  describe('over streamable HTTP', () => {
    let server: FaultHttpServer;
    let connection: McpConnection;
    beforeAll(async () => {
      server = await startFaultHttp('http-huge', await freePort(), join(dir, 'http.jsonl'));
      connection = new McpConnection({ name: 'bighttp', transport: 'streamable-http', url: server.url }, { connectTimeoutMs: 15_000, maxMessageBytes: CAP });
      await connection.connect();
    });
    afterAll(async () => {
      await connection.close();
      await server.stop();
    });

    it('an event past the cap fails its call, saying so, and the session stays', async () => {
      const err = await failure(call(connection, 'dump', { megabytes: 8 }));
      expect(err).toBeInstanceOf(McpMessageTooLargeError);
      expect((err as Error).message).toContain('MCP server bighttp sent a message of more than 64 KiB');
      expect(text(await call(connection, 'echo', { message: 'after' }))).toBe('Echo: after');
      expect(server.record.count((e) => e.rpc === 'initialize')).toBe(1);
    });

    it('JSON nested too deep fails its call', async () => {
      expect(await failure(call(connection, 'deep', { levels: 10_000 }))).toBeInstanceOf(McpMessageTooDeepError);
    });
  });

  describe('over legacy SSE', () => {
    let server: McpHttpServer;
    beforeAll(async () => {
      server = await startMcpHttpServer({
        transport: 'sse',
        tools: [
          { name: 'echo', run: (args) => ({ content: [{ type: 'text', text: `Echo: ${String(args.message)}` }] }) },
          { name: 'dump', run: () => ({ content: [{ type: 'text', text: 'x'.repeat(1024 * 1024) }] }) },
        ],
      });
    });
    afterAll(() => server.stop());

    it('an event past the cap fails its call and closes the connection, whose one stream is cut', async () => {
      const connection = new McpConnection({ name: 'legacy', transport: 'sse', url: server.url }, { connectTimeoutMs: 15_000, maxMessageBytes: CAP });
      await connection.connect();
      try {
        expect(text(await call(connection, 'echo', { message: 'before' }))).toBe('Echo: before');
        const err = await failure(call(connection, 'dump', {}));
        expect(err).toBeInstanceOf(McpMessageTooLargeError);
        expect((err as Error).message).toBe('MCP server legacy sent a message of more than 64 KiB (DATAAGENT_MCP_MAX_MESSAGE_BYTES)');
        await new Promise((resolve) => setImmediate(resolve));
        expect(connection.status).toBe('error');
        expect(connection.lastError).toContain('DATAAGENT_MCP_MAX_MESSAGE_BYTES');
      } finally {
        await connection.close();
      }
    });
  });
});
