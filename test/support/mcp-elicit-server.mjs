#!/usr/bin/env node
/**
 * A small MCP server built on the SDK whose tools ask the person something in the middle of the
 * call (`elicitation/create`), for tests that point a connection or the real worker at it.
 * Plain JavaScript, so the worker (from dist/) and jest (from source) both run this one file.
 *
 *   node mcp-elicit-server.mjs stdio [--record FILE]
 *   node mcp-elicit-server.mjs http --port N [--record FILE]     streamable HTTP at /mcp
 *
 * Tools:
 *   book_table {restaurant}  a form: name (required), guests (integer, default 2), seating
 *                            (inside|terrace, default inside), high_chair (boolean, default
 *                            false); answers with what it booked, or that the person declined
 *                            or cancelled
 *   verify_account {}        a URL to open (URL mode); answers with the person's action
 *   stall {}                 never answers (until the caller cancels): a call that can only time out
 *
 * --record FILE appends one JSON line per elicitation's outcome, as the server received it:
 *   {"event":"elicitation","tool","mode","action","content"}
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const argv = process.argv.slice(2);
const mode = argv[0];
const option = (name) => {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
};
const recordFile = option('--record');

function record(entry) {
  if (recordFile) appendFileSync(recordFile, `${JSON.stringify({ ...entry, at: Date.now() })}\n`);
}

const BOOKING_FORM = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name on the booking', description: 'Who the table is for', minLength: 1 },
    guests: { type: 'integer', title: 'Guests', minimum: 1, maximum: 12, default: 2 },
    seating: { type: 'string', title: 'Seating', enum: ['inside', 'terrace'], default: 'inside' },
    high_chair: { type: 'boolean', title: 'High chair', default: false },
  },
  required: ['name'],
};

const TOOLS = [
  { name: 'book_table', description: 'Books a table; asks the person for the details', inputSchema: { type: 'object', properties: { restaurant: { type: 'string' } } } },
  { name: 'verify_account', description: 'Has the person verify their account on a web page', inputSchema: { type: 'object' } },
  { name: 'stall', description: 'Never answers', inputSchema: { type: 'object' } },
];

const text = (t, isError = false) => ({ content: [{ type: 'text', text: t }], ...(isError ? { isError: true } : {}) });

function mcpServer() {
  const server = new Server({ name: 'elicit-test', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {};
    try {
      if (request.params.name === 'book_table') {
        const restaurant = String(args.restaurant ?? 'the restaurant');
        // Sent on the call's own stream (relatedRequestId), as a server elicits during a call.
        const result = await server.elicitInput({ mode: 'form', message: `Booking a table at ${restaurant}: who is coming?`, requestedSchema: BOOKING_FORM }, { relatedRequestId: extra.requestId, timeout: 600_000 });
        record({ event: 'elicitation', tool: 'book_table', mode: 'form', action: result.action, content: result.content ?? null, restaurant });
        if (result.action === 'accept') {
          const c = result.content;
          return text(`Booked ${restaurant} for ${c.name}: ${c.guests} guests, ${c.seating}${c.high_chair ? ', with a high chair' : ''}`);
        }
        return text(result.action === 'decline' ? 'The person declined the booking; nothing was booked' : 'The person cancelled; nothing was booked');
      }
      if (request.params.name === 'stall') {
        await new Promise((resolve) => extra.signal.addEventListener('abort', resolve, { once: true }));
        return text('cancelled', true);
      }
      if (request.params.name === 'verify_account') {
        const result = await server.elicitInput(
          { mode: 'url', message: 'Verify your account on our site', url: 'https://accounts.example.com/verify?session=abc', elicitationId: randomUUID() },
          { relatedRequestId: extra.requestId, timeout: 600_000 },
        );
        record({ event: 'elicitation', tool: 'verify_account', mode: 'url', action: result.action, content: result.content ?? null });
        return text(`verification: ${result.action}`);
      }
      return text(`no tool ${request.params.name}`, true);
    } catch (err) {
      record({ event: 'elicitation_failed', tool: request.params.name, error: err instanceof Error ? err.message : String(err) });
      return text(`elicitation failed: ${err instanceof Error ? err.message : String(err)}`, true);
    }
  });
  return server;
}

if (mode === 'stdio') {
  await mcpServer().connect(new StdioServerTransport());
} else if (mode === 'http') {
  const port = Number(option('--port') ?? 0);
  const streams = new Map();
  const http = createServer(async (req, res) => {
    let body;
    if (req.method === 'POST') {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
    }
    const id = req.headers['mcp-session-id'];
    let stream = typeof id === 'string' ? streams.get(id) : undefined;
    if (!stream) {
      if (id) return void res.writeHead(404).end();
      stream = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void streams.set(sid, stream) });
      await mcpServer().connect(stream);
    }
    await stream.handleRequest(req, res, body);
  });
  http.listen(port, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ listening: http.address().port })}\n`));
} else {
  console.error('usage: mcp-elicit-server.mjs stdio|http [--port N] [--record FILE]');
  process.exit(2);
}
