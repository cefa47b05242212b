import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScriptedLlmServer } from './scripted-llm-server.js';
import { createTestDatabase, dropTestDatabase, mysqlEnv } from './databases.js';
import { startGateway, startWorker, type GatewayProcess, type WorkerProcess } from './app-processes.js';

export const TEST_API_KEY = 'test-key-alice';
export const OTHER_API_KEY = 'test-key-bob';

export interface SystemOptions {
  workers?: number;
  /** Extra environment for gateway and workers. */
  env?: NodeJS.ProcessEnv;
  chunkIntervalMs?: number;
}

/**
 * A whole DataAgent for one test file: a scripted LLM server, a fresh database, its own
 * queue name, one gateway and N worker processes against the harness's Redis and MariaDB.
 */
export class TestSystem {
  gateway!: GatewayProcess;
  workers: WorkerProcess[] = [];
  llm!: ScriptedLlmServer;
  env!: NodeJS.ProcessEnv;
  /** Storage root and workspaces of this system (a temporary folder). */
  dataDir!: string;
  private database!: string;

  static async start(options: SystemOptions = {}): Promise<TestSystem> {
    const system = new TestSystem();
    system.llm = await ScriptedLlmServer.start({ chunkIntervalMs: options.chunkIntervalMs ?? 0 });
    const db = await createTestDatabase('e2e');
    system.dataDir = mkdtempSync(join(tmpdir(), 'da-e2e-'));
    system.database = db.database;
    system.env = {
      ...mysqlEnv(db),
      DATAAGENT_QUEUE_NAME: `runs-${randomUUID().slice(0, 8)}`,
      DATAAGENT_API_KEYS: `${TEST_API_KEY}:acme:alice,${OTHER_API_KEY}:acme:bob`,
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
    system.gateway = await startGateway(system.env);
    for (let i = 0; i < (options.workers ?? 1); i++) await system.addWorker();
    return system;
  }

  get url(): string {
    return this.gateway.url;
  }

  async addWorker(env: NodeJS.ProcessEnv = {}): Promise<WorkerProcess> {
    const worker = await startWorker({ ...this.env, DATAAGENT_WORKER_ID: `worker-${this.workers.length + 1}`, ...env });
    this.workers.push(worker);
    return worker;
  }

  async restartGateway(): Promise<void> {
    await this.gateway.stop();
    this.gateway = await startGateway(this.env);
  }

  async stop(): Promise<void> {
    await Promise.all([this.gateway?.stop(), ...this.workers.map((w) => w.stop())]);
    await this.llm?.stop();
    if (this.database) await dropTestDatabase(this.database).catch(() => undefined);
    if (this.dataDir) rmSync(this.dataDir, { recursive: true, force: true });
  }
}
