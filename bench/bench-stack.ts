import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startGateway, startWorker, type AppProcess, type GatewayProcess } from '../test/support/app-processes.js';
import { startLlmServerProcess, type LlmServerProcess } from './llm-server-process.js';
import { loadLocalServices, type MariadbHandle, type RedisHandle } from './local-services.js';
import type { Teardown } from './teardown.js';

export const BENCH_API_KEY = 'bench-api-key';

export interface BenchStackOptions {
  /** DATAAGENT_WORKER_CONCURRENCY: more than the largest N, so no run waits for a slot. */
  workerConcurrency: number;
  /** Worker processes (BENCH_WORKERS). */
  workers: number;
  /** Gateway processes of each gateway, its DATAAGENT_WORKERS (BENCH_GATEWAY_PROCESSES); default 1, a lone process. */
  gatewayProcesses?: number;
  /** When set, gateway, worker and LLM server write V8 CPU profiles here (`<role>.cpuprofile`) on exit. */
  cpuProfileDir?: string;
  /** Environment over the stack's own, for the gateway and every worker (e.g. more API keys, a quota). */
  env?: NodeJS.ProcessEnv;
  log: (line: string) => void;
}

/** A worker process and the DATAAGENT_WORKER_ID it was started with (its run_started events carry it). */
export interface BenchWorker {
  id: string;
  process: AppProcess;
}

/** Everything one bench run talks to, all on loopback. */
export interface BenchStack {
  redis: RedisHandle;
  mariadb: MariadbHandle;
  llm: LlmServerProcess;
  gateway: GatewayProcess;
  worker: AppProcess;
  /** Every worker process started so far, by worker id (killed ones included: check the process). */
  workers: BenchWorker[];
  /** Starts one more worker with the same settings (a replacement), added to `workers` and to the teardown. */
  startWorker(): Promise<BenchWorker>;
  /** Starts one more gateway with the same settings and `env` over them (e.g. another quota), added to the teardown. */
  startGateway(env?: NodeJS.ProcessEnv): Promise<GatewayProcess>;
  /** Process ids by role, for CPU accounting. */
  pids: Record<string, number>;
  /** Roles of `pids` whose CPU is counted with every process below theirs (see CpuMeter). */
  cpuTrees: string[];
  /** Gateway processes behind the gateway's port (1: no cluster primary). */
  gatewayProcesses: number;
}

/**
 * The environment that makes a process the bench starts write a V8 CPU profile to
 * `<dir>/<role>.cpuprofile` when it stops (cpu-profile-hook.ts); empty without a folder.
 */
export function cpuProfileEnv(dir: string | undefined, role: string): NodeJS.ProcessEnv {
  return dir
    ? {
        NODE_OPTIONS: `--import=${pathToFileURL(fileURLToPath(new URL('./cpu-profile-hook.js', import.meta.url))).href}`,
        BENCH_CPU_PROFILE_OUT: path.join(dir, `${role}.cpuprofile`),
      }
    : {};
}

/**
 * Starts Redis and MariaDB (throw-away, non-durable, in a temporary folder), the scripted LLM
 * server as a process of its own, one gateway (of BENCH_GATEWAY_PROCESSES processes) and BENCH_WORKERS workers. Each piece registers its stop
 * with `teardown` as soon as it runs, so a failure later still stops it.
 */
export async function startBenchStack(teardown: Teardown, options: BenchStackOptions): Promise<BenchStack> {
  const { log } = options;
  const gatewayProcesses = Math.max(1, options.gatewayProcesses ?? 1);
  const services = await loadLocalServices();
  await services.ensureServerPackages({ log });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dataagent-bench-'));
  teardown.add('temporary folder', () => rm(dir, { recursive: true, force: true }));

  const [redisStart, mariadbStart] = await Promise.allSettled([
    services.startRedis({ dir: path.join(dir, 'redis'), persist: false }),
    services.startMariadb({ dir: path.join(dir, 'mariadb'), database: 'dataagent_bench', user: 'dataagent_bench', password: randomBytes(12).toString('hex'), durable: false }),
  ]);
  if (redisStart.status === 'fulfilled') teardown.add('redis', () => redisStart.value.stop());
  if (mariadbStart.status === 'fulfilled') teardown.add('mariadb', () => mariadbStart.value.stop());
  if (redisStart.status === 'rejected') throw redisStart.reason;
  if (mariadbStart.status === 'rejected') throw mariadbStart.reason;
  const redis = redisStart.value;
  const mariadb = mariadbStart.value;
  log(`redis ${redis.url} (${redis.startedInMs} ms), mariadb 127.0.0.1:${mariadb.port} (${mariadb.startedInMs} ms)`);

  if (options.cpuProfileDir) await mkdir(options.cpuProfileDir, { recursive: true });
  // The hook's output path is inherited by every process of a gateway cluster: they write the same file.
  if (options.cpuProfileDir && gatewayProcesses > 1) log(`CPU profiles: the gateway's ${gatewayProcesses} processes and its primary all write gateway.cpuprofile; the last to stop wins`);
  const profileEnv = (role: string) => cpuProfileEnv(options.cpuProfileDir, role);

  const llm = await startLlmServerProcess(profileEnv('llm'));
  teardown.add('scripted LLM server', () => llm.stop());
  log(`scripted LLM server ${llm.baseUrl}`);

  const env: NodeJS.ProcessEnv = {
    DATAAGENT_REDIS_URL: redis.url,
    DATAAGENT_MYSQL_HOST: mariadb.host,
    DATAAGENT_MYSQL_PORT: String(mariadb.port),
    DATAAGENT_MYSQL_USER: mariadb.user,
    DATAAGENT_MYSQL_PASSWORD: mariadb.password,
    DATAAGENT_MYSQL_DATABASE: mariadb.database,
    DATAAGENT_QUEUE_NAME: 'bench-runs',
    DATAAGENT_API_KEYS: `${BENCH_API_KEY}:bench:load`,
    DATAAGENT_MAX_PENDING_RUNS: '1000000',
    // The whole load comes from one key: its streams are the measure here, not a quota.
    DATAAGENT_MAX_STREAMS_PER_KEY: '0',
    DATAAGENT_MAX_STREAMS_PER_USER: '0',
    DATAAGENT_WORKER_CONCURRENCY: String(options.workerConcurrency),
    OPENAI_BASE_URL: llm.baseUrl,
    OPENAI_API_KEY: 'sk-bench-not-a-real-key',
    DATAAGENT_MODEL: 'scripted',
    DATAAGENT_WORKERS: String(gatewayProcesses),
    ...options.env,
  };
  // The gateway logs at warn; the worker must stay at info, the level of its "worker ready" line.
  const gateway = await startGateway({ ...env, DATAAGENT_LOG_LEVEL: 'warn', ...profileEnv('gateway') });
  teardown.add('gateway', () => gateway.stop());
  let gateways = 1;
  const startExtraGateway = async (extra: NodeJS.ProcessEnv = {}): Promise<GatewayProcess> => {
    const role = `gateway ${++gateways}`;
    const g = await startGateway({ ...env, DATAAGENT_LOG_LEVEL: 'warn', ...profileEnv(role.replace(' ', '-')), ...extra });
    teardown.add(role, () => g.stop());
    return g;
  };
  const benchWorkers: BenchWorker[] = [];
  const startBenchWorker = async (): Promise<BenchWorker> => {
    const i = benchWorkers.length + 1;
    const role = i === 1 ? 'worker' : `worker ${i}`;
    const id = `bench-worker-${i}`;
    const w = await startWorker({ ...env, DATAAGENT_WORKER_ID: id, ...profileEnv(role.replace(' ', '-')) });
    teardown.add(role, () => w.stop());
    const started = { id, process: w };
    benchWorkers.push(started);
    return started;
  };
  for (let i = 1; i <= options.workers; i++) await startBenchWorker();
  const workers = benchWorkers.map((w) => w.process);
  const worker = workers[0];
  log(`gateway ${gateway.url} (${gatewayProcesses === 1 ? 'one process' : `${gatewayProcesses} processes under primary pid ${gateway.proc.pid}`}), ${workers.length} worker(s) pid ${workers.map((w) => w.proc.pid).join(', ')} (concurrency ${options.workerConcurrency} each)`);

  return {
    redis,
    mariadb,
    llm,
    gateway,
    worker,
    workers: benchWorkers,
    startWorker: startBenchWorker,
    startGateway: startExtraGateway,
    pids: {
      gateway: gateway.proc.pid!,
      ...Object.fromEntries(workers.map((w, i) => [i === 0 ? 'worker' : `worker ${i + 1}`, w.proc.pid!])),
      'llm server': llm.proc.pid!,
      redis: redis.process.pid!,
      mariadb: mariadb.process.pid!,
      'bench clients': process.pid,
    },
    // A cluster's gateway processes are the primary's children: its CPU counts theirs.
    cpuTrees: gatewayProcesses > 1 ? ['gateway'] : [],
    gatewayProcesses,
  };
}
