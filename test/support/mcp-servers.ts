import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** `@modelcontextprotocol/server-everything`'s entry point, run with node. */
export const EVERYTHING = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url)).replace('/dist/node_modules/', '/node_modules/');

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface RunningServer {
  url: string;
  port: number;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/** server-everything over SSE (`/sse`) or streamable HTTP (`/mcp`) on a free loopback port; resolves once it answers. */
export async function startEverything(mode: 'sse' | 'streamableHttp', port?: number): Promise<RunningServer> {
  const chosen = port ?? (await freePort());
  const proc = spawn(process.execPath, [EVERYTHING, mode], { env: { ...process.env, PORT: String(chosen) }, stdio: ['ignore', 'ignore', 'pipe'] });
  proc.stderr!.resume();
  const url = `http://127.0.0.1:${chosen}${mode === 'sse' ? '/sse' : '/mcp'}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${chosen}/`, { signal: AbortSignal.timeout(500) }).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`server-everything ${mode} did not start on ${chosen}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port: chosen,
    proc,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGKILL');
      await once(proc, 'exit');
    },
  };
}

export interface RecordingProxy {
  url: string;
  port: number;
  /** JSON-RPC methods of the requests and notifications the client sent, in order. */
  methods: string[];
  stop(): Promise<void>;
}

/**
 * A loopback reverse proxy in front of a streamable HTTP MCP server that records the JSON-RPC
 * methods clients send (so a test can see `notifications/cancelled` reach a server it cannot
 * look into) and streams answers back untouched.
 */
export async function startRecordingProxy(target: RunningServer): Promise<RecordingProxy> {
  const methods: string[] = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      try {
        const parsed = body.length > 0 ? (JSON.parse(body.toString('utf8')) as unknown) : undefined;
        for (const message of Array.isArray(parsed) ? parsed : parsed ? [parsed] : []) {
          if (typeof (message as { method?: unknown }).method === 'string') methods.push((message as { method: string }).method);
        }
      } catch {
        // Not JSON: forwarded as it is.
      }
      const upstream = httpRequest(
        { host: '127.0.0.1', port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: `127.0.0.1:${target.port}` } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      res.on('close', () => upstream.destroy());
      upstream.end(body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    methods,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * TCP connections from this machine to 127.0.0.1:`port` that are open (ESTABLISHED, or closing
 * but not yet gone), from /proc/net/tcp: the client side of each, so leaked sockets show.
 */
export function openConnectionsTo(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const lines = readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1);
  // Columns: sl local_address rem_address st ...; states 01 ESTABLISHED, 08 CLOSE_WAIT.
  return lines.filter((line) => {
    const [, , remote, state] = line.trim().split(/\s+/);
    return remote?.endsWith(`:${hexPort}`) && (state === '01' || state === '08');
  }).length;
}
