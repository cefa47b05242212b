import { readFile } from 'node:fs/promises';
import type { Redis } from 'ioredis';
import type { McpRuntimeConfig } from '#core/config/mcp-settings.js';
import type { RunToolProvider } from '#core/engine/run-tools.js';
import { parseMcpConfigFile, type McpServerConfig } from '#core/mcp/mcp-config.js';
import type { McpServerStore } from '#core/mcp/mcp-server-store.js';
import type { Caller } from '#core/session/caller.js';
import type { McpConnection } from '#mcp/mcp-connection.js';
import { MCP_POOL_DEFAULTS, McpPool, type PoolScope } from '#mcp/mcp-pool.js';
import { mcpToolProvider } from '#mcp/mcp-provider.js';
import { checkOutboundUrl } from '#core/tools/builtin/net/outbound-guard.js';
import { redisKeys } from '#transport/redis-keys.js';

/** Seconds a published status lives unless a worker refreshes it. */
const STATUS_TTL_SECONDS = 300;
/** The scope under which global servers' shared connections report. */
export const GLOBAL_STATUS_OWNER = { tenantId: '_global', userId: '_global' } as const;

export interface McpRuntime {
  pool: McpPool;
  provider: RunToolProvider;
  globalServers: McpServerConfig[];
  close(): Promise<void>;
}

interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * A worker's MCP side: the operator's servers from DATAAGENT_MCP_CONFIG, users' servers from the
 * store (reread when their config version in Redis moves), the pool, statuses published to
 * Redis for the gateway, and the provider that equips runs.
 * @throws Error when the config file cannot be read or is not JSON of a known shape.
 */
export async function createMcpRuntime(
  config: McpRuntimeConfig,
  outboundAllowlist: readonly string[],
  redis: Redis,
  store: McpServerStore | undefined,
  workerId: string,
  logger: Logger,
): Promise<McpRuntime> {
  const globalServers = config.configFile ? await loadConfigFile(config.configFile, logger) : [];
  const publish = (scope: PoolScope, connection: McpConnection) => {
    const owner = scope.kind === 'global' ? GLOBAL_STATUS_OWNER : scope;
    const key = redisKeys.mcpStatus(owner.tenantId, owner.userId);
    const status = {
      status: connection.status,
      last_error: connection.lastError ?? null,
      tool_count: connection.catalog.tools.length,
      catalog_version: connection.catalog.version,
      last_check: (connection.lastCheck ?? new Date()).toISOString(),
      worker_id: workerId,
    };
    redis
      .multi()
      .hset(key, connection.config.name, JSON.stringify(status))
      .expire(key, STATUS_TTL_SECONDS)
      .exec()
      .catch(() => undefined);
  };
  const pool = new McpPool({
    ...MCP_POOL_DEFAULTS,
    maxPerUser: config.maxServersPerUser,
    maxConnections: config.maxConnections,
    connectTimeoutMs: config.connectTimeoutSeconds * 1000,
    idleMs: config.idleSeconds * 1000,
    pingIntervalMs: config.pingIntervalSeconds * 1000,
    onStatus: publish,
    // Remote servers pass the same address check as http_request: no private or loopback address unless allowlisted.
    checkUrl: async (url) => {
      const check = await checkOutboundUrl(url, { allowlist: outboundAllowlist });
      return check.ok ? null : check.reason;
    },
  });

  // A user's servers are read again only when the gateway has raised their config version.
  const cache = new Map<string, { version: string; servers: McpServerConfig[] }>();
  const userServers = async (caller: Caller): Promise<McpServerConfig[]> => {
    if (!store) return [];
    const key = `${caller.tenantId}:${caller.userId}`;
    const version = (await redis.get(redisKeys.mcpConfigVersion(caller.tenantId, caller.userId))) ?? '0';
    const cached = cache.get(key);
    if (cached?.version === version) return cached.servers;
    const servers = (await store.list(caller.tenantId, caller.userId)).map((s) => s.config);
    cache.set(key, { version, servers });
    if (cache.size > 10_000) cache.delete(cache.keys().next().value!);
    return servers;
  };

  const provider = mcpToolProvider({ pool, globalServers, userServers, callTimeoutMs: config.callTimeoutMs, logger });
  if (globalServers.length > 0) logger.info({ servers: globalServers.map((s) => s.name) }, 'MCP servers configured');
  return { pool, provider, globalServers, close: () => pool.close() };
}

async function loadConfigFile(file: string, logger: Logger): Promise<McpServerConfig[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`DATAAGENT_MCP_CONFIG: cannot read ${file}: ${(err as Error).message}`);
  }
  const { servers, errors } = parseMcpConfigFile(text);
  if (errors.some((e) => e.field === '(file)')) throw new Error(`DATAAGENT_MCP_CONFIG ${file}: ${errors.map((e) => e.message).join('; ')}`);
  for (const error of errors) logger.warn({ file, field: error.field }, `MCP config: ${error.field} ${error.message}; that server is left out`);
  return servers;
}
