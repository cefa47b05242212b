import type { SecretCipher } from '../secrets/secret-cipher.js';
import type { McpServerConfig } from './mcp-config.js';
import { openMcpSecrets, sealMcpSecrets } from './mcp-secrets.js';
import { McpServerExistsError, McpServerLimitError, type McpServerStore, type UserMcpServer } from './mcp-server-store.js';

interface Row {
  /** Secret values sealed, as the MySQL store keeps them. */
  config: McpServerConfig;
  createdAt: Date;
  updatedAt: Date;
}

/** Users' MCP servers in process memory (DATAAGENT_SESSION_STORE=memory and unit tests). */
export class MemoryMcpServerStore implements McpServerStore {
  /** `tenant\0user` → server name → row. */
  private readonly users = new Map<string, Map<string, Row>>();

  constructor(
    private readonly now: () => Date = () => new Date(),
    private readonly cipher?: SecretCipher,
  ) {}

  async list(tenantId: string, userId: string): Promise<UserMcpServer[]> {
    const rows = [...(this.users.get(userKey(tenantId, userId))?.entries() ?? [])];
    return rows.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => this.toServer(tenantId, userId, row));
  }

  async get(tenantId: string, userId: string, name: string): Promise<UserMcpServer | null> {
    const row = this.users.get(userKey(tenantId, userId))?.get(name);
    return row ? this.toServer(tenantId, userId, row) : null;
  }

  async create(tenantId: string, userId: string, config: McpServerConfig, options: { maxServers?: number } = {}): Promise<UserMcpServer> {
    const sealed = sealMcpSecrets({ tenantId, userId }, config, this.cipher);
    const key = userKey(tenantId, userId);
    const servers = this.users.get(key) ?? new Map<string, Row>();
    if (servers.has(config.name)) throw new McpServerExistsError(config.name);
    if (options.maxServers !== undefined && servers.size >= options.maxServers) throw new McpServerLimitError(options.maxServers);
    const at = this.now();
    const row: Row = { config: sealed, createdAt: at, updatedAt: at };
    servers.set(config.name, row);
    this.users.set(key, servers);
    return this.toServer(tenantId, userId, row);
  }

  async update(tenantId: string, userId: string, name: string, config: McpServerConfig): Promise<UserMcpServer | null> {
    const sealed = sealMcpSecrets({ tenantId, userId }, { ...config, name }, this.cipher);
    const row = this.users.get(userKey(tenantId, userId))?.get(name);
    if (!row) return null;
    Object.assign(row, { config: sealed, updatedAt: this.now() });
    return this.toServer(tenantId, userId, row);
  }

  async delete(tenantId: string, userId: string, name: string): Promise<boolean> {
    const key = userKey(tenantId, userId);
    const servers = this.users.get(key);
    const existed = servers?.delete(name) ?? false;
    if (servers?.size === 0) this.users.delete(key);
    return existed;
  }

  private toServer(tenantId: string, userId: string, row: Row): UserMcpServer {
    const { config, unreadable } = openMcpSecrets({ tenantId, userId }, row.config, this.cipher);
    return { tenantId, userId, config, createdAt: row.createdAt, updatedAt: row.updatedAt, ...(unreadable.length > 0 ? { unreadableSecrets: unreadable } : {}) };
  }
}

function userKey(tenantId: string, userId: string): string {
  return `${tenantId}\0${userId}`;
}
