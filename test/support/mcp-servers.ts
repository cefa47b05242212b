import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
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
