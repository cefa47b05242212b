import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, chownSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { ScriptedLlmServer } from './scripted-llm-server.js';
import { createTestDatabase, dropTestDatabase, mysqlEnv } from './databases.js';
import { startGateway, startWorker, type GatewayProcess, type ProcessUser, type WorkerLaunchOptions, type WorkerProcess } from './app-processes.js';

export const TEST_API_KEY = 'test-key-alice';
export const OTHER_API_KEY = 'test-key-bob';
/** The systems' DATAAGENT_API_KEYS unless a test sets its own: alice and bob of tenant acme. */
export const TEST_API_KEYS = `${TEST_API_KEY}:acme:alice,${OTHER_API_KEY}:acme:bob`;

/** Systems of this test file running now (a lane runs its files one after another). */
let liveSystems = 0;

/**
 * Gives back the stream slots (per key and person) that systems of earlier files in this lane
 * left leased: a gateway a test killed holds its slots for their 60 s lease, and the next file's
 * streams on the same keys would meet a cap they never filled. Systems on a Redis of their own
 * start with none.
 */
async function releaseStreamSlots(url: string | undefined): Promise<void> {
  if (!url) return;
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ match: 'da:streams:*', count: 1000 })) keys.push(...(batch as string[]));
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

/** The checkout, whose dist/ and node_modules/ the processes run from. */
const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/dist\/$/, '/');

/**
 * Lets a worker of another uid reach the checkout: `path` and the folders above it that others
 * cannot enter (a clone in a 0700 temporary folder) get o+x, and their modes back from the
 * function returned.
 */
function letOthersEnter(path: string): () => void {
  const changed: Array<[string, number]> = [];
  for (let dir = path; ; dir = dirname(dir)) {
    const mode = statSync(dir).mode & 0o7777;
    if ((mode & 0o001) === 0) {
      chmodSync(dir, mode | 0o001);
      changed.push([dir, mode]);
    }
    if (dir === dirname(dir)) break;
  }
  return () => {
    for (const [dir, mode] of changed.reverse()) chmodSync(dir, mode);
  };
}

export interface SystemOptions {
  /** How many workers to start (default 1), or each one's variables over `env` (`DATAAGENT_WORKER_ID` included). */
  workers?: number | NodeJS.ProcessEnv[];
  /** Extra environment for gateway and workers. */
  env?: NodeJS.ProcessEnv;
  chunkIntervalMs?: number;
  /** More gateways on the same queue, Redis and database, each with these variables over `env`. */
  extraGateways?: NodeJS.ProcessEnv[];
  /** The OS user the workers run as (the storage folder becomes theirs); default the test's own. */
  workerUser?: ProcessUser;
}

/**
 * A whole DataAgent for one test file: a scripted LLM server, a fresh database, its own
 * queue name, one gateway and N worker processes against the harness's Redis and MariaDB.
 */
export class TestSystem {
  gateway!: GatewayProcess;
  /** The gateways of `options.extraGateways`, in that order; stopped with the system. */
  extraGateways: GatewayProcess[] = [];
  workers: WorkerProcess[] = [];
  llm!: ScriptedLlmServer;
  env!: NodeJS.ProcessEnv;
  /** Storage root and workspaces of this system (a temporary folder). */
  dataDir!: string;
  private database!: string;
  private workerUser?: ProcessUser;
  private workersStarting = 0;
  private stopped = false;
  private restoreModes?: () => void;

  static async start(options: SystemOptions = {}): Promise<TestSystem> {
    if (liveSystems === 0) await releaseStreamSlots(process.env.DATAAGENT_REDIS_URL);
    liveSystems++;
    const system = new TestSystem();
    system.llm = await ScriptedLlmServer.start({ chunkIntervalMs: options.chunkIntervalMs ?? 0 });
    const db = await createTestDatabase('e2e');
    system.dataDir = mkdtempSync(join(tmpdir(), 'da-e2e-'));
    system.database = db.database;
    system.workerUser = options.workerUser;
    if (options.workerUser) {
      chownSync(system.dataDir, options.workerUser.uid, options.workerUser.gid);
      system.restoreModes = letOthersEnter(REPOSITORY);
    }
    system.env = {
      ...mysqlEnv(db),
      DATAAGENT_QUEUE_NAME: `runs-${randomUUID().slice(0, 8)}`,
      DATAAGENT_API_KEYS: TEST_API_KEYS,
      OPENAI_BASE_URL: system.llm.baseUrl,
      OPENAI_API_KEY: 'sk-test-not-a-real-key',
      DATAAGENT_MODEL: 'scripted',
      DATAAGENT_STORAGE_ROOT: system.dataDir,
      DATAAGENT_WORKSPACE_ROOT: join(system.dataDir, 'workspaces', '{tenant_id}', '{user_id}'),
      DATAAGENT_SKILLS_DIR: fileURLToPath(new URL('../../skills', import.meta.url)).replace('/dist/skills', '/skills'),
      // Gateway and workers share it, as `npm start` arranges: users' MCP secrets are sealed with it.
      DATAAGENT_SECRET_KEY: randomBytes(32).toString('hex'),
      // One text event per model delta, so tests can count them; test/coalescing.test.ts turns coalescing on.
      DATAAGENT_TEXT_COALESCE_MS: '0',
      ...options.env,
    };
    // Gateway and workers start together, as `npm start` starts them: each spends seconds loading
    // its modules, and the database's migrations run under a lock, so one of them migrates.
    const extra = options.extraGateways ?? [];
    const workerEnvs = typeof options.workers === 'object' ? options.workers : Array.from({ length: options.workers ?? 1 }, () => ({}));
    const [gateway, ...others] = await Promise.allSettled([
      startGateway(system.env),
      ...extra.map((env) => startGateway({ ...system.env, ...env })),
      ...workerEnvs.map((env) => system.addWorker(env)),
    ]);
    if (gateway.status === 'fulfilled') system.gateway = gateway.value;
    for (const result of others.slice(0, extra.length)) if (result.status === 'fulfilled') system.extraGateways.push(result.value as GatewayProcess);
    const failed = [gateway, ...others].find((result) => result.status === 'rejected');
    if (failed) {
      await system.stop();
      throw failed.reason;
    }
    return system;
  }

  get url(): string {
    return this.gateway.url;
  }

  /** Starts one more worker (`worker-N`, N counting the running and starting ones, so workers started together differ). */
  async addWorker(env: NodeJS.ProcessEnv = {}, options: WorkerLaunchOptions = {}): Promise<WorkerProcess> {
    const id = `worker-${this.workers.length + ++this.workersStarting}`;
    try {
      const worker = await startWorker({ ...this.env, DATAAGENT_WORKER_ID: id, ...(this.workerUser ? { HOME: this.dataDir } : {}), ...env }, { ...(this.workerUser ? { user: this.workerUser } : {}), ...options });
      this.workers.push(worker);
      return worker;
    } finally {
      this.workersStarting--;
    }
  }

  async restartGateway(): Promise<void> {
    await this.gateway.stop();
    this.gateway = await startGateway(this.env);
  }

  async stop(): Promise<void> {
    if (!this.stopped) liveSystems--;
    this.stopped = true;
    await Promise.all([this.gateway?.stop(), ...this.extraGateways.map((g) => g.stop()), ...this.workers.map((w) => w.stop())]);
    await this.llm?.stop();
    if (this.database) await dropTestDatabase(this.database).catch(() => undefined);
    if (this.dataDir) rmSync(this.dataDir, { recursive: true, force: true });
    this.restoreModes?.();
    this.restoreModes = undefined;
  }
}
