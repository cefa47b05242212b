import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

const root = fileURLToPath(new URL('../../', import.meta.url)).replace(/dist\/$/, '');

export interface AppProcess {
  proc: ChildProcess;
  /** Everything the process wrote, for failure messages. */
  output: string[];
  /** SIGTERM and wait for exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<number | null>;
  /** SIGKILL: a crash, nothing drained. */
  kill(): Promise<void>;
}

export interface GatewayProcess extends AppProcess {
  url: string;
  port: number;
}

export interface WorkerProcess extends AppProcess {
  /** Its DATAAGENT_WORKER_ID when started with one (what its runs' run_started names). */
  workerId?: string;
  /** Its metrics endpoint (`http://127.0.0.1:PORT/metrics`); undefined when metrics are off. */
  metricsUrl?: string;
  /** The read end of the pipe it inherited (see {@link WorkerLaunchOptions.inheritedPipeFd}). */
  inheritedPipe?: Readable;
}

/** An OS user a process runs as instead of the test's own. */
export interface ProcessUser {
  uid: number;
  gid: number;
}

export interface WorkerLaunchOptions {
  /**
   * Starts the worker with the write end of a pipe open at this descriptor, past a gap, the way a
   * supervisor's or a CI runner's pipe reaches a process: not close-on-exec in the worker.
   */
  inheritedPipeFd?: number;
  /** The OS user the worker runs as; default the test's own. */
  user?: ProcessUser;
}

function launch(script: string, env: NodeJS.ProcessEnv, ready: (line: string) => Record<string, unknown> | null, timeoutMs = 30_000, options: WorkerLaunchOptions = {}) {
  const pipeFd = options.inheritedPipeFd;
  // Descriptors 3 to pipeFd - 1 are left closed: the gap that keeps Node from marking pipeFd close-on-exec.
  const extra = pipeFd === undefined ? [] : [...Array.from({ length: pipeFd - 3 }, () => 'ignore' as const), 'pipe' as const];
  const proc = spawn(process.execPath, [`${root}dist/${script}`], {
    env: { ...process.env, DATAAGENT_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe', ...extra],
    ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
  });
  const output: string[] = [];
  const exited = once(proc, 'exit');
  const stop = async (graceMs = 10_000) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    const [code] = await exited;
    clearTimeout(timer);
    return code as number | null;
  };
  const kill = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGKILL');
    await exited;
  };
  const readyInfo = new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} not ready after ${timeoutMs} ms:\n${output.join('\n')}`)), timeoutMs);
    for (const stream of [proc.stdout!, proc.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        output.push(line);
        if (output.length > 2000) output.shift();
        const info = ready(line);
        if (info) {
          clearTimeout(timer);
          resolve(info);
        }
      });
    }
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}:\n${output.join('\n')}`));
    });
  });
  return { proc, output, stop, kill, readyInfo };
}

function jsonLine(line: string): Record<string, unknown> | null {
  if (!line.startsWith('{')) return null;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** Starts a gateway process on a free port and waits until it listens. */
export async function startGateway(env: NodeJS.ProcessEnv): Promise<GatewayProcess> {
  const p = launch('gateway.js', { DATAAGENT_PORT: '0', DATAAGENT_HOST: '127.0.0.1', ...env }, (line) => {
    const j = jsonLine(line);
    return j?.msg === 'gateway listening' ? j : null;
  });
  const info = await p.readyInfo;
  return { proc: p.proc, output: p.output, stop: p.stop, kill: p.kill, url: String(info.url), port: Number(info.port) };
}

/** Starts a worker process (its metrics on a free loopback port) and waits until it consumes the queue. */
export async function startWorker(env: NodeJS.ProcessEnv, options: WorkerLaunchOptions = {}): Promise<WorkerProcess> {
  const p = launch('worker.js', { DATAAGENT_LOG_LEVEL: 'info', DATAAGENT_METRICS_PORT: '0', DATAAGENT_METRICS_HOST: '127.0.0.1', ...env }, (line) => {
    const j = jsonLine(line);
    return j?.msg === 'worker ready' ? j : null;
  }, undefined, options);
  const inheritedPipe = options.inheritedPipeFd === undefined ? undefined : (p.proc.stdio[options.inheritedPipeFd] as Readable);
  await p.readyInfo;
  // Printed before `worker ready`.
  const metrics = p.output.map(jsonLine).find((j) => j?.msg === 'worker metrics listening');
  return { proc: p.proc, output: p.output, stop: p.stop, kill: p.kill, ...(env.DATAAGENT_WORKER_ID ? { workerId: env.DATAAGENT_WORKER_ID } : {}), ...(metrics ? { metricsUrl: String(metrics.url) } : {}), ...(inheritedPipe ? { inheritedPipe } : {}) };
}
