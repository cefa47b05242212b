import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { repoRoot } from './repo-paths.js';
import type { Teardown } from './teardown.js';

/**
 * The bare relay of DataAgent's streaming hops, for the CPU floor the issue compares against:
 * relay-gateway.ts (a plain Socket.IO server fed by Redis pub/sub) and relay-worker.ts (streams
 * the scripted LLM's SSE and PUBLISHes each chunk), each a process of its own like the gateway
 * and a worker, on the bench's Redis and LLM server. The bench's chat clients drive it as they
 * drive the gateway.
 */
export interface BareRelay {
  /** Where the chat clients connect (namespace `/chat`). */
  url: string;
  /** Process ids by role, named as the stack's so that cpuSplit reads them the same way. */
  pids: { gateway: number; worker: number };
}

/**
 * Starts both processes; each registers its stop with `teardown` as soon as it runs.
 *
 * @param env Extra environment for both, e.g. the CPU profile hook; `profileEnv(role)` gives each its own.
 * @throws Error when a process exits or prints no ready line within `timeoutMs`.
 */
export async function startBareRelay(
  teardown: Teardown,
  { redisUrl, llmBaseUrl, profileEnv = () => ({}), timeoutMs = 15_000 }: { redisUrl: string; llmBaseUrl: string; profileEnv?: (role: string) => NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<BareRelay> {
  const worker = await startChild('relay-worker', [redisUrl, llmBaseUrl], profileEnv('relay-worker'), timeoutMs);
  teardown.add('bare relay worker', () => stop(worker.proc));
  const gateway = await startChild('relay-gateway', [redisUrl], profileEnv('relay-gateway'), timeoutMs);
  teardown.add('bare relay gateway', () => stop(gateway.proc));
  const { port } = gateway.ready as { port: number };
  return { url: `http://127.0.0.1:${port}`, pids: { gateway: gateway.proc.pid!, worker: worker.proc.pid! } };
}

async function startChild(name: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ proc: ChildProcess; ready: unknown }> {
  const proc = spawn(process.execPath, [`${repoRoot}dist/bench/${name}.js`, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  try {
    const ready = await new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} printed no ready line within ${timeoutMs} ms`)), timeoutMs);
      createInterface({ input: proc.stdout! }).once('line', (line) => {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited with ${code}`));
      });
    });
    return { proc, ready };
  } catch (err) {
    await stop(proc);
    throw err;
  }
}

/** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. */
async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = once(proc, 'exit');
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
