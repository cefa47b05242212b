#!/usr/bin/env node
/**
 * A small MCP server built on the SDK whose mode picks the fault it shows, for tests that point
 * the real worker at it. Plain JavaScript, so the worker (from dist/) and jest (from source) both
 * run this one file with `node`.
 *
 *   node mcp-fault-server.mjs <mode> [--record FILE] [--port N] [--ignore-sigterm]
 *
 * stdio modes, each offering `echo` beside its fault:
 *   hang        `wait` never answers; a notifications/cancelled for it is recorded
 *   crash       `crash` makes the process exit in the middle of the call
 *   bad-output  `stats` declares an outputSchema and returns structuredContent that breaks it
 *   slow        `slow {seconds}` answers after that long unless cancelled (recorded)
 *   shop        `get_order {orderId}` (read-only, with an outputSchema), `lookup {key}`
 *               (idempotent) and `cancel_order {orderId}` (destructive), whose first call per
 *               key never answers, and `report {seconds}`
 *   huge        `dump {megabytes}` answers with that much text in one message, written a MiB at
 *               a time as it is made; `deep {levels}` answers with structuredContent nested that
 *               many levels deep
 *   wrapper <mode> ...   an `npx`-style wrapper: runs `node <this file> <mode> ...` as its child
 *               on the same stdin and stdout, forwards no signal, and waits for it
 *
 * Streamable HTTP modes, on 127.0.0.1:--port at /mcp:
 *   http        a stateful server offering `echo` and `drop` (destroys every open connection in
 *               the middle of the call, its response stream included, then exits); an unknown
 *               session gets 404
 *   http-401    answers 401 to every request
 *   http-huge   the `huge` mode's tools, stateful like `http`, answering in event streams
 *
 * Stdio servers keep running when their stdin closes (a timer holds the process), as careless
 * servers do: only a signal ends them. With --ignore-sigterm only SIGKILL does.
 *
 * --record FILE appends one JSON line per thing a test wants to count or wait for:
 *   {"event":"start","mode","pid","ppid","pgid","env"}   the process started (`env`: its variables' names)
 *   {"event":"connect","pid"}                      a client finished the handshake (stdio)
 *   {"event":"http","method","rpc","session"}      an HTTP request, `rpc` its JSON-RPC method
 *   {"event":"call","tool","request_id","pid"}     a tool call began
 *   {"event":"cancelled","tool","request_id","reason","pid"}  the client cancelled it
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
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

/** This process's group, from /proc (Node has no getpgid). */
function processGroup() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

const ECHO = {
  tool: { name: 'echo', description: 'Echoes the message back', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } },
  run: async (args) => ({ content: [{ type: 'text', text: `Echo: ${args.message ?? ''}` }] }),
};

/** Resolves after `ms`, or at once when the call is cancelled. */
const waitOrCancel = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** The fault tool each mode offers beside `echo`. */
const FAULTS = {
  hang: {
    tool: { name: 'wait', description: 'Never answers', inputSchema: { type: 'object' } },
    run: (_args, extra) => new Promise((resolve) => extra.signal.addEventListener('abort', () => resolve({ content: [] }), { once: true })),
  },
  crash: {
    tool: { name: 'crash', description: 'Exits the server in the middle of the call', inputSchema: { type: 'object' } },
    run: () => new Promise(() => setTimeout(() => process.exit(3), 20)),
  },
  'bad-output': {
    tool: {
      name: 'stats',
      description: 'Counts things, and answers with a count that is not a number',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] },
    },
    run: async () => ({ content: [{ type: 'text', text: '{"count":"many"}' }], structuredContent: { count: 'many' } }),
  },
  slow: {
    tool: { name: 'slow', description: 'Answers after `seconds`', inputSchema: { type: 'object', properties: { seconds: { type: 'number' } } } },
    run: async (args, extra) => {
      await waitOrCancel(Number(args.seconds ?? 60) * 1000, extra.signal);
      return { content: [{ type: 'text', text: extra.signal.aborted ? 'cancelled' : 'done' }] };
    },
  },
  // Governance: schemas, retries of idempotent tools only, approval of destructive ones.
  shop: [
    {
      tool: {
        name: 'get_order',
        description: 'An order by its id',
        inputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
        outputSchema: { type: 'object', properties: { orderId: { type: 'string' }, status: { type: 'string' } }, required: ['orderId', 'status'] },
        annotations: { readOnlyHint: true },
      },
      run: async (args) => ({ content: [{ type: 'text', text: `order ${args.orderId}: shipped` }], structuredContent: { orderId: args.orderId, status: 'shipped' } }),
    },
    {
      // The first call for a key never answers; later ones do.
      tool: { name: 'lookup', description: 'Looks a key up', inputSchema: { type: 'object', properties: { key: { type: 'string' } } }, annotations: { idempotentHint: true } },
      run: (args, extra) => (seenKeys.has(`lookup:${args.key}`) ? Promise.resolve({ content: [{ type: 'text', text: `found ${args.key}` }] }) : (seenKeys.add(`lookup:${args.key}`), waitForCancel(extra))),
    },
    {
      // The same first-call hang, on a tool that must never run twice.
      tool: { name: 'cancel_order', description: 'Cancels an order', inputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] }, annotations: { destructiveHint: true } },
      run: (args, extra) =>
        seenKeys.has(`cancel:${args.orderId}`) ? Promise.resolve({ content: [{ type: 'text', text: `cancelled ${args.orderId}` }] }) : (seenKeys.add(`cancel:${args.orderId}`), waitForCancel(extra)),
    },
    {
      tool: { name: 'report', description: 'Answers after `seconds`', inputSchema: { type: 'object', properties: { seconds: { type: 'number' } } } },
      run: async (args, extra) => {
        await waitOrCancel(Number(args.seconds ?? 60) * 1000, extra.signal);
        return { content: [{ type: 'text', text: 'report ready' }] };
      },
    },
  ],
  // Answers no client should swallow whole: one huge message, and JSON nested absurdly deep.
  huge: [
    {
      tool: { name: 'dump', description: 'Answers with `megabytes` MiB of text', inputSchema: { type: 'object', properties: { megabytes: { type: 'number' } } } },
      // Written to stdout as it is made, a MiB at a time, the way a server streams a large result;
      // the SDK would hold it all in memory first (three copies of 100 MB, past a sandbox's limit).
      // Each write blocks (stdout on a pipe does, on Linux), so nothing the SDK sends lands inside the line.
      run: (args, extra) => {
        const mebibyte = 'x'.repeat(1024 * 1024);
        process.stdout.write(`{"jsonrpc":"2.0","id":${JSON.stringify(extra.requestId)},"result":{"content":[{"type":"text","text":"`);
        for (let i = 0; i < Number(args.megabytes ?? 1); i++) process.stdout.write(mebibyte);
        process.stdout.write('"}]}}\n');
        return new Promise(() => undefined); // answered already: the SDK must not answer again
      },
    },
    {
      tool: { name: 'deep', description: 'Answers with structuredContent nested `levels` deep', inputSchema: { type: 'object', properties: { levels: { type: 'number' } } } },
      run: async (args) => ({ content: [{ type: 'text', text: 'deep' }], structuredContent: { nested: `\u0000deep:${Number(args.levels ?? 10)}\u0000` } }),
    },
  ],
  http: {
    tool: { name: 'drop', description: 'Drops every connection in the middle of the call', inputSchema: { type: 'object' } },
    run: () =>
      new Promise(() => {
        // Let the response stream open first, so the drop cuts a stream and not a request.
        setTimeout(() => {
          for (const socket of sockets) socket.destroy();
          process.exit(4);
        }, 50);
      }),
  },
};

/**
 * JSON nested 10,000 levels deep cannot be serialized in JavaScript (JSON.stringify recurses and
 * overflows the stack), yet a server in another language sends it easily. So `deep` answers with
 * a marker, and the SDK's JSON.stringify calls in this process write the nested text in its place.
 */
const DEEP_MARKER = /"\\u0000deep:(\d+)\\u0000"/;
const stringify = JSON.stringify;
JSON.stringify = (...args) => {
  const text = stringify(...args);
  return typeof text === 'string' && text.length < 1_000_000 && text.includes('deep:') ? text.replace(DEEP_MARKER, (_, levels) => `${'{"a":'.repeat(Number(levels))}0${'}'.repeat(Number(levels))}`) : text;
};

const sockets = new Set();
/** Keys the shop's tools have seen, for their first-call-hangs behaviour. */
const seenKeys = new Set();

/** A call that answers only by being cancelled. */
function waitForCancel(extra) {
  return new Promise((resolve) => extra.signal.addEventListener('abort', () => resolve({ content: [] }), { once: true }));
}

function mcpServer(faultMode) {
  const tools = [ECHO, ...[FAULTS[faultMode]].flat()];
  const server = new Server({ name: `fault-${faultMode}`, version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((t) => t.tool) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const entry = tools.find((t) => t.tool.name === name);
    if (!entry) return { content: [{ type: 'text', text: `no tool ${name}` }], isError: true };
    record({ event: 'call', tool: name, request_id: extra.requestId, pid: process.pid });
    extra.signal.addEventListener('abort', () => record({ event: 'cancelled', tool: name, request_id: extra.requestId, reason: String(extra.signal.reason ?? ''), pid: process.pid }), {
      once: true,
    });
    return entry.run(request.params.arguments ?? {}, extra);
  });
  server.oninitialized = () => record({ event: 'connect', pid: process.pid });
  return server;
}

async function serveStdio() {
  if (argv.includes('--ignore-sigterm')) process.on('SIGTERM', () => undefined);
  setInterval(() => undefined, 1 << 30);
  await mcpServer(mode).connect(new StdioServerTransport());
}

function runWrapper() {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...argv.slice(1)], { stdio: 'inherit' });
  child.on('exit', (code) => process.exit(code ?? 1));
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `dump` over HTTP, answered the way a server streams a large result: written as it is made, a
 * MiB at a time, following the reader's pace (the SDK would build all of it in memory first).
 */
async function streamDump(res, request, session) {
  record({ event: 'call', tool: 'dump', request_id: request.id, pid: process.pid });
  const megabytes = Number(request.params.arguments?.megabytes ?? 1);
  const mebibyte = 'x'.repeat(1024 * 1024);
  const write = (text) => res.write(text) || new Promise((resolve) => (res.once('drain', resolve), res.once('close', resolve)));
  res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': session });
  await write(`event: message\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(request.id)},"result":{"content":[{"type":"text","text":"`);
  for (let i = 0; i < megabytes && !res.destroyed; i++) await write(mebibyte);
  res.end('"}]}}\n\n');
}

async function serveHttp() {
  const port = Number(option('--port'));
  const sessions = new Map();
  const httpServer = createServer(async (req, res) => {
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const session = req.headers['mcp-session-id'];
    record({ event: 'http', method: req.method, rpc: Array.isArray(body) ? body.map((m) => m.method).join(',') : body?.method, session: session ?? null });
    if (mode === 'http-401') {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="fault"' });
      res.end(JSON.stringify({ error: 'unauthorized', error_description: 'the token was revoked' }));
      return;
    }
    let transport = session ? sessions.get(session) : undefined;
    if (transport && mode === 'http-huge' && body?.method === 'tools/call' && body.params?.name === 'dump') {
      await streamDump(res, body, session);
      return;
    }
    if (session && !transport) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
      return;
    }
    if (!transport) {
      if (body?.method !== 'initialize') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'No session: initialize first' }, id: null }));
        return;
      }
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (id) => sessions.set(id, transport) });
      transport.onclose = () => sessions.delete(transport.sessionId);
      await mcpServer(mode === 'http-huge' ? 'huge' : 'http').connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  httpServer.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(port, '127.0.0.1', resolve);
  });
  process.stdout.write(`${JSON.stringify({ listening: httpServer.address().port })}\n`);
}

record({ event: 'start', mode, pid: process.pid, ppid: process.ppid, pgid: processGroup(), env: Object.keys(process.env).sort() });
if (mode === 'wrapper') runWrapper();
else if (mode === 'http' || mode === 'http-401' || mode === 'http-huge') await serveHttp();
else if (FAULTS[mode]) await serveStdio();
else {
  process.stderr.write(`mcp-fault-server: unknown mode ${mode}\n`);
  process.exit(2);
}
