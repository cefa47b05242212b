import { createHash } from 'node:crypto';
import type { DataSource, EntityManager, Repository } from 'typeorm';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import { openMcpSecrets, sealMcpSecrets } from '#core/mcp/mcp-secrets.js';
import { McpServerExistsError, McpServerLimitError, type McpServerStore, type UserMcpServer } from '#core/mcp/mcp-server-store.js';
import type { SecretCipher } from '#core/secrets/secret-cipher.js';
import type { JsonObject } from './entities/column-types.js';
import { McpServerEntity } from './entities/mcp-server.entity.js';

/** Seconds a create waits for another create of the same user's servers. */
const USER_LOCK_WAIT_SECONDS = 10;

/**
 * Users' MCP servers in MySQL, env and header values encrypted with DATAAGENT_SECRET_KEY. A
 * create that checks the user's server limit holds a named lock per user, so concurrent
 * creates on any gateway cannot pass the limit together.
 */
export class MysqlMcpServerStore implements McpServerStore {
  private readonly repo: Repository<McpServerEntity>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly now: () => Date,
    private readonly cipher?: SecretCipher,
  ) {
    this.repo = dataSource.getRepository(McpServerEntity);
  }

  async list(tenantId: string, userId: string): Promise<UserMcpServer[]> {
    const rows = await this.repo.find({ where: { tenantId, userId }, order: { name: 'ASC' } });
    return rows.map((row) => this.toServer(row));
  }

  async get(tenantId: string, userId: string, name: string): Promise<UserMcpServer | null> {
    const row = await this.repo.findOneBy({ tenantId, userId, name });
    return row ? this.toServer(row) : null;
  }

  async create(tenantId: string, userId: string, config: McpServerConfig, options: { maxServers?: number } = {}): Promise<UserMcpServer> {
    const at = this.now();
    const row: Omit<McpServerEntity, 'id'> = {
      tenantId,
      userId,
      name: config.name,
      config: sealMcpSecrets({ tenantId, userId }, config, this.cipher) as JsonObject,
      createdAt: at,
      updatedAt: at,
    };
    const insert = async (manager: EntityManager) => {
      if (await manager.existsBy(McpServerEntity, { tenantId, userId, name: config.name })) throw new McpServerExistsError(config.name);
      if (options.maxServers !== undefined && (await manager.countBy(McpServerEntity, { tenantId, userId })) >= options.maxServers) {
        throw new McpServerLimitError(options.maxServers);
      }
      try {
        await manager.insert(McpServerEntity, row);
      } catch (err) {
        // The unique key decides when two creates of one name race.
        if (isDuplicateKey(err)) throw new McpServerExistsError(config.name);
        throw err;
      }
    };
    if (options.maxServers === undefined) await insert(this.dataSource.manager);
    else await this.underUserLock(tenantId, userId, insert);
    return this.toServer(row);
  }

  async update(tenantId: string, userId: string, name: string, config: McpServerConfig): Promise<UserMcpServer | null> {
    const sealed = sealMcpSecrets({ tenantId, userId }, { ...config, name }, this.cipher) as JsonObject;
    const result = await this.repo.update({ tenantId, userId, name }, { config: sealed, updatedAt: this.now() });
    return result.affected ? this.get(tenantId, userId, name) : null;
  }

  async delete(tenantId: string, userId: string, name: string): Promise<boolean> {
    const result = await this.repo.delete({ tenantId, userId, name });
    return (result.affected ?? 0) > 0;
  }

  /** Runs `work` on one connection holding the user's named lock (GET_LOCK is per connection). */
  private async underUserLock<T>(tenantId: string, userId: string, work: (manager: EntityManager) => Promise<T>): Promise<T> {
    // Lock names are server-wide and at most 64 characters.
    const lockName = `dataagent-mcp-${createHash('sha256').update(`${tenantId}\0${userId}`).digest('hex').slice(0, 40)}`;
    const runner = this.dataSource.createQueryRunner();
    try {
      const [{ acquired }] = await runner.query('SELECT GET_LOCK(?, ?) AS acquired', [lockName, USER_LOCK_WAIT_SECONDS]);
      if (Number(acquired) !== 1) throw new Error(`timed out waiting for the lock on ${tenantId}/${userId}'s MCP servers`);
      try {
        return await work(runner.manager);
      } finally {
        await runner.query('SELECT RELEASE_LOCK(?)', [lockName]);
      }
    } finally {
      await runner.release();
    }
  }

  private toServer(row: Omit<McpServerEntity, 'id'>): UserMcpServer {
    const owner = { tenantId: row.tenantId, userId: row.userId };
    const { config, unreadable } = openMcpSecrets(owner, row.config as McpServerConfig, this.cipher);
    return { ...owner, config, createdAt: row.createdAt, updatedAt: row.updatedAt, ...(unreadable.length > 0 ? { unreadableSecrets: unreadable } : {}) };
  }
}

function isDuplicateKey(err: unknown): boolean {
  const e = err as { code?: unknown; driverError?: { code?: unknown } };
  return e?.code === 'ER_DUP_ENTRY' || e?.driverError?.code === 'ER_DUP_ENTRY';
}
