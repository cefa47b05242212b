import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** One tool of the server: its name and what a call answers. */
export interface TestTool {
  name: string;
  run: (args: Record<string, unknown>) => CallToolResult;
}

export interface McpHttpServer {
  /** The MCP endpoint: `/mcp` (streamable HTTP) or `/sse` (legacy SSE). */
  url: string;
  port: number;
  /** Every request it received: `METHOD path`. */
  requests: string[];
  stop(): Promise<void>;
}

export interface McpHttpServerOptions {
  transport: 'streamable-http' | 'sse';
  tools: TestTool[];
  /** Loopback address to listen on (127.0.0.1 unless a test needs another). */
  host?: string;
  /** 0 for any free one. */
  port?: number;
}

/** An in-process MCP server over streamable HTTP or SSE on a loopback address, for specs that need a real remote server. */
export async function startMcpHttpServer({ transport, tools, host = '127.0.0.1', port = 0 }: McpHttpServerOptions): Promise<McpHttpServer> {
  const requests: string[] = [];
  const mcpServer = () => {
    const server = new Server({ name: 'test-http', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((t) => ({ name: t.name, inputSchema: { type: 'object' as const } })) }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const tool = tools.find((t) => t.name === request.params.name);
      return tool ? tool.run(request.params.arguments ?? {}) : { content: [{ type: 'text', text: `no tool ${request.params.name}` }], isError: true };
    });
    return server;
  };
  const streams = new Map<string, StreamableHTTPServerTransport>();
  const sse = new Map<string, SSEServerTransport>();
  const http: HttpServer = createServer(async (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (transport === 'sse') {
      if (req.method === 'GET') {
        const stream = new SSEServerTransport('/messages', res);
        sse.set(stream.sessionId, stream);
        await mcpServer().connect(stream);
        return;
      }
      const session = new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId') ?? '';
      const stream = sse.get(session);
      if (!stream) return void res.writeHead(404).end();
      await stream.handlePostMessage(req, res);
      return;
    }
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    const id = req.headers['mcp-session-id'];
    let stream = typeof id === 'string' ? streams.get(id) : undefined;
    if (!stream) {
      if (id) return void res.writeHead(404).end();
      stream = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void streams.set(sid, stream!) });
      await mcpServer().connect(stream);
    }
    await stream.handleRequest(req, res, body);
  });
  http.listen(port, host);
  await once(http, 'listening');
  const chosen = (http.address() as AddressInfo).port;
  return {
    url: `http://${host}:${chosen}${transport === 'sse' ? '/sse' : '/mcp'}`,
    port: chosen,
    requests,
    stop: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : undefined;
}
