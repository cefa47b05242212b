import { MysqlMcpOAuthStore } from './mysql-mcp-oauth-store.js';
import type { DataSource } from 'typeorm';
import type { MysqlConfig } from '#core/config/settings.js';
import type { MemoryStoreOptions } from '#core/memory/memory-store.js';
import type { SecretCipher } from '#core/secrets/secret-cipher.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { openDatabase, type OpenDatabaseOptions } from './data-source.js';
import { MysqlApiKeyStore } from './mysql-api-key-store.js';
import { MysqlTenantStore } from './mysql-tenant-store.js';
import { MysqlBudgetStore } from './mysql-budget-store.js';
import { MysqlMcpCatalogStore } from './mysql-mcp-catalog-store.js';
import { MysqlMcpServerStore } from './mysql-mcp-server-store.js';
import { MysqlMemoryStore } from './mysql-memory-store.js';
import { MysqlToolBindingStore, MysqlToolCallAuditStore } from './mysql-tool-governance-stores.js';
import { MysqlMessageStore } from './mysql-message-store.js';
import { MysqlRunEventArchive } from './mysql-run-event-archive.js';
import { MysqlRunStore } from './mysql-run-store.js';
import { MysqlSessionStore } from './mysql-session-store.js';
import { MysqlSubmissionStore } from './mysql-submission-store.js';
import { MysqlPriceStore } from './mysql-price-store.js';
import { MysqlUsageStore } from './mysql-usage-store.js';

export interface ConversationStoreOptions extends OpenDatabaseOptions {
  /** Encrypts MCP servers' secret values (DATAAGENT_SECRET_KEY); without it, servers with secrets are refused. */
  cipher?: SecretCipher;
  /** Retention and note length of long-term memory (DATAAGENT_MEMORY_RETENTION_DAYS). */
  memory?: MemoryStoreOptions;
}

/** Sessions, messages, runs, run events, users' MCP servers and MCP tool catalogs in MySQL/MariaDB through TypeORM. */
export class MysqlConversationStore implements ConversationStore {
  readonly sessions: MysqlSessionStore;
  readonly messages: MysqlMessageStore;
  readonly runs: MysqlRunStore;
  readonly submissions: MysqlSubmissionStore;
  readonly events: MysqlRunEventArchive;
  readonly mcpServers: MysqlMcpServerStore;
  readonly mcpOAuth: MysqlMcpOAuthStore;
  readonly mcpCatalog: MysqlMcpCatalogStore;
  readonly toolBindings: MysqlToolBindingStore;
  readonly toolCalls: MysqlToolCallAuditStore;
  readonly apiKeys: MysqlApiKeyStore;
  readonly memories: MysqlMemoryStore;
  readonly tenants: MysqlTenantStore;
  readonly usage: MysqlUsageStore;
  readonly prices: MysqlPriceStore;
  readonly budgets: MysqlBudgetStore;

  /**
   * @param dataSource An initialized data source at the latest schema (see openDatabase).
   * @param now The clock for created/updated/finished times and session expiry.
   * @param cipher Encrypts MCP servers' secret values.
   * @param memory Retention and note length of long-term memory.
   */
  constructor(
    private readonly dataSource: DataSource,
    now: () => Date = () => new Date(),
    cipher?: SecretCipher,
    memory: MemoryStoreOptions = {},
  ) {
    this.sessions = new MysqlSessionStore(dataSource, now);
    this.messages = new MysqlMessageStore(dataSource, now);
    this.runs = new MysqlRunStore(dataSource, now);
    this.submissions = new MysqlSubmissionStore(dataSource, now);
    this.usage = new MysqlUsageStore(dataSource);
    this.prices = new MysqlPriceStore(dataSource);
    this.events = new MysqlRunEventArchive(dataSource, now, this.usage);
    this.mcpServers = new MysqlMcpServerStore(dataSource, now, cipher);
    this.mcpOAuth = new MysqlMcpOAuthStore(dataSource, now, cipher);
    this.mcpCatalog = new MysqlMcpCatalogStore(dataSource, now);
    this.toolBindings = new MysqlToolBindingStore(dataSource, now);
    this.toolCalls = new MysqlToolCallAuditStore(dataSource);
    this.apiKeys = new MysqlApiKeyStore(dataSource);
    this.memories = new MysqlMemoryStore(dataSource, now, memory);
    this.tenants = new MysqlTenantStore(dataSource);
    this.budgets = new MysqlBudgetStore(dataSource);
  }

  /**
   * Connects (tolerating a database that is still starting), migrates, and returns the store.
   * @throws DatabaseUnavailableError when the database cannot be reached.
   */
  static async open(config: MysqlConfig, options: ConversationStoreOptions = {}): Promise<MysqlConversationStore> {
    return new MysqlConversationStore(await openDatabase(config, options), undefined, options.cipher, options.memory);
  }

  /** True when the database answers `SELECT 1` within `timeoutMs`. */
  async ping(timeoutMs = 2_000): Promise<boolean> {
    if (!this.dataSource.isInitialized) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const query = this.dataSource.query('SELECT 1').then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([query, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The connection pool now: connections open, idle among them, and queries waiting for one.
   * Read from mysql2's pool internals (it has no public counts); null when they are not there.
   */
  poolStats(): { open: number; idle: number; waiting: number } | null {
    if (!this.dataSource.isInitialized) return null;
    const pool = (this.dataSource.driver as { pool?: Record<string, { length?: unknown } | undefined> }).pool;
    const [open, idle, waiting] = ['_allConnections', '_freeConnections', '_connectionQueue'].map((key) => pool?.[key]?.length);
    if (typeof open !== 'number' || typeof idle !== 'number' || typeof waiting !== 'number') return null;
    return { open, idle, waiting };
  }

  async close(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}
