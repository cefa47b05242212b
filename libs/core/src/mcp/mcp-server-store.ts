import type { McpServerConfig } from './mcp-config.js';

/** A user's own MCP server: extends or overrides the operator's global ones. */
export interface UserMcpServer {
  tenantId: string;
  userId: string;
  config: McpServerConfig;
  createdAt: Date;
  updatedAt: Date;
  /**
   * Secret values that could not be decrypted (`env.NAME`, `headers.NAME`): DATAAGENT_SECRET_KEY
   * is unset or not the key they were stored with, or the stored value was altered. Their values
   * in `config` are `''`; a worker should not connect with them. Absent when every value opened.
   */
  unreadableSecrets?: string[];
}

/** Thrown by `create` when the user already has a server of that name. */
export class McpServerExistsError extends Error {
  constructor(readonly serverName: string) {
    super(`An MCP server named "${serverName}" exists already`);
    this.name = 'McpServerExistsError';
  }
}

/** Thrown by `create` when the user already has `maxServers` servers. */
export class McpServerLimitError extends Error {
  constructor(readonly maxServers: number) {
    super(`A user may have at most ${maxServers} MCP servers`);
    this.name = 'McpServerLimitError';
  }
}

/**
 * Users' MCP servers. Secret values (env, headers) are stored encrypted by the implementation
 * and come back in clear only from here, to the worker that connects.
 */
export interface McpServerStore {
  /** The user's servers, by name. */
  list(tenantId: string, userId: string): Promise<UserMcpServer[]>;
  get(tenantId: string, userId: string, name: string): Promise<UserMcpServer | null>;
  /**
   * @param options.maxServers Refuses the server when the user has this many already (checked
   *   and inserted atomically, so concurrent creates cannot pass it).
   * @throws McpServerExistsError, McpServerLimitError, SecretKeyRequiredError (secret values and no key).
   */
  create(tenantId: string, userId: string, config: McpServerConfig, options?: { maxServers?: number }): Promise<UserMcpServer>;
  /**
   * Replaces the server's config (its name stays `name`). Returns null when there is no such server.
   * @throws SecretKeyRequiredError (secret values and no key).
   */
  update(tenantId: string, userId: string, name: string, config: McpServerConfig): Promise<UserMcpServer | null>;
  /** Returns false when there was no such server. */
  delete(tenantId: string, userId: string, name: string): Promise<boolean>;
}
