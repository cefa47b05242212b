import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import type { MysqlConfig } from '#core/config/settings.js';
import { ApiKeyEntity } from './entities/api-key.entity.js';
import { McpServerEntity } from './entities/mcp-server.entity.js';
import { McpToolEntity } from './entities/mcp-tool.entity.js';
import { MemoryNoteEntity } from './entities/memory-note.entity.js';
import { ToolBindingEntity } from './entities/tool-binding.entity.js';
import { ToolCallLogEntity } from './entities/tool-call-log.entity.js';
import { MessageEntity } from './entities/message.entity.js';
import { RunEventBatchEntity } from './entities/run-event-batch.entity.js';
import { RunEntity } from './entities/run.entity.js';
import { SessionEntity } from './entities/session.entity.js';
import { TenantEntity } from './entities/tenant.entity.js';
import { InitialSchema1763769600000 } from './migrations/1763769600000-initial-schema.js';
import { McpServers1764547200000 } from './migrations/1764547200000-mcp-servers.js';
import { McpTools1764633600000 } from './migrations/1764633600000-mcp-tools.js';
import { McpGovernance1764720000000 } from './migrations/1764720000000-mcp-governance.js';
import { ApiKeys1764806400000 } from './migrations/1764806400000-api-keys.js';
import { RunsByTenant1764892800000 } from './migrations/1764892800000-runs-by-tenant.js';
import { Tenants1764979200000 } from './migrations/1764979200000-tenants.js';
import { Memories1765065600000 } from './migrations/1765065600000-memories.js';
import { McpOAuthGrants1765152000000 } from './migrations/1765152000000-mcp-oauth-grants.js';
import { EphemeralSessions1765238400000 } from './migrations/1765238400000-ephemeral-sessions.js';
import { Usage1765324800000 } from './migrations/1765324800000-usage.js';
import { Budgets1765411200000 } from './migrations/1765411200000-budgets.js';

/** Entity classes (ESM: classes, never glob paths). */
export const ENTITIES = [SessionEntity, MessageEntity, RunEntity, RunEventBatchEntity, McpServerEntity, McpToolEntity, ToolBindingEntity, ToolCallLogEntity, ApiKeyEntity, TenantEntity, MemoryNoteEntity];

/** Migrations in the order they run. */
export const MIGRATIONS = [InitialSchema1763769600000, McpServers1764547200000, McpTools1764633600000, McpGovernance1764720000000, ApiKeys1764806400000, RunsByTenant1764892800000, Tenants1764979200000, Memories1765065600000, McpOAuthGrants1765152000000, EphemeralSessions1765238400000, Usage1765324800000, Budgets1765411200000];

/** Errors a retry cannot fix: wrong credentials or a database that does not exist. */
const PERMANENT_ERRORS = new Set(['ER_ACCESS_DENIED_ERROR', 'ER_DBACCESS_DENIED_ERROR', 'ER_BAD_DB_ERROR']);

/** Which server TypeORM talks to; MariaDB reports schemas differently (defaults, JSON as LONGTEXT). */
export type DatabaseFlavor = 'mysql' | 'mariadb';

export interface OpenDatabaseOptions {
  /** Detected from the server's version when not given. */
  flavor?: DatabaseFlavor;
  /** How long to keep retrying the first connection while the server starts (default 30 s). */
  retryForMs?: number;
  /** Called before each retry with the reason. */
  onRetry?: (error: Error, attempt: number, delayMs: number) => void;
}

export class DatabaseUnavailableError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause });
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * Builds (without connecting) the TypeORM data source for the conversation tables.
 * Dates travel in UTC (`timezone: 'Z'`); the schema comes from migrations, never `synchronize`.
 */
export function createDataSource(config: MysqlConfig, flavor: DatabaseFlavor = 'mysql'): DataSource {
  return new DataSource({
    type: flavor,
    host: config.host,
    port: config.port,
    username: config.user,
    password: config.password,
    database: config.database,
    poolSize: config.poolSize,
    timezone: 'Z',
    charset: 'utf8mb4_unicode_ci',
    connectTimeout: 10_000,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'typeorm_migrations',
    migrationsRun: false,
    synchronize: false,
    logging: false,
    extra: { enableKeepAlive: true },
  });
}

/**
 * Connects (retrying with backoff while the server is still starting) and runs pending
 * migrations under a MySQL named lock, so processes starting together migrate once.
 *
 * @returns An initialized data source at the latest schema.
 * @throws DatabaseUnavailableError when the server stays unreachable for `retryForMs`, or at
 *   once for wrong credentials or a missing database.
 */
export async function openDatabase(config: MysqlConfig, options: OpenDatabaseOptions = {}): Promise<DataSource> {
  let dataSource = await connectWithRetry(config, options.flavor ?? 'mysql', options);
  if (!options.flavor && (await isMariadb(dataSource))) {
    await dataSource.destroy();
    dataSource = await connectWithRetry(config, 'mariadb', options);
  }
  try {
    await runMigrationsLocked(dataSource, config.database);
  } catch (error) {
    await dataSource.destroy().catch(() => undefined);
    throw error;
  }
  return dataSource;
}

async function connectWithRetry(
  config: MysqlConfig,
  flavor: DatabaseFlavor,
  { retryForMs = 30_000, onRetry }: OpenDatabaseOptions,
): Promise<DataSource> {
  const where = `${config.user}@${config.host}:${config.port}/${config.database}`;
  const deadline = Date.now() + retryForMs;
  for (let attempt = 1, delay = 100; ; attempt++, delay = Math.min(delay * 2, 2_000)) {
    try {
      return await createDataSource(config, flavor).initialize();
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      const reason = error instanceof Error ? error.message : String(error);
      if (PERMANENT_ERRORS.has(code)) {
        throw new DatabaseUnavailableError(
          `MySQL at ${where} refused the connection (${code}): ${reason}. Check DATAAGENT_MYSQL_USER, DATAAGENT_MYSQL_PASSWORD and DATAAGENT_MYSQL_DATABASE.`,
          error,
        );
      }
      const wait = Math.min(delay, deadline - Date.now());
      if (wait <= 0) {
        throw new DatabaseUnavailableError(
          `MySQL at ${where} did not accept a connection within ${Math.round(retryForMs / 1000)} s (${attempt} attempts): ${reason}. ` +
            'Check DATAAGENT_MYSQL_HOST and DATAAGENT_MYSQL_PORT, or start the database.',
          error,
        );
      }
      onRetry?.(error instanceof Error ? error : new Error(reason), attempt, wait);
      await sleep(wait);
    }
  }
}

/** TypeORM keeps only the number of VERSION(); MariaDB says its name after it. */
async function isMariadb(dataSource: DataSource): Promise<boolean> {
  const [{ version }] = await dataSource.query('SELECT VERSION() AS version');
  return /mariadb/i.test(String(version));
}

async function runMigrationsLocked(dataSource: DataSource, database: string): Promise<void> {
  // Lock names are server-wide and at most 64 characters.
  const lockName = `dataagent-migrations-${createHash('sha256').update(database).digest('hex').slice(0, 32)}`;
  const runner = dataSource.createQueryRunner();
  try {
    const [{ acquired }] = await runner.query('SELECT GET_LOCK(?, 120) AS acquired', [lockName]);
    if (Number(acquired) !== 1) throw new Error(`timed out waiting for the migration lock ${lockName}`);
    try {
      await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await runner.query('SELECT RELEASE_LOCK(?)', [lockName]);
    }
  } finally {
    await runner.release();
  }
}
