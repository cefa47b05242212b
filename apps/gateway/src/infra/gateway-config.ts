import { LogConfig, MetricsConfig, MysqlConfig, RedisConfig, SecretsConfig, StoreConfig, TenancyConfig, WorkerConfig } from '#core/config/settings.js';
import { loadConfigs } from '#core/config/env.js';
import { McpConfig } from '#core/mcp/user-server-config.js';
import { ToolsConfig } from '#core/tools/tools-config.js';
import { PricingConfig } from '#core/usage/pricing-config.js';
import { ServerConfig } from './server-config.js';

/** Everything a gateway process is configured with, validated once at startup. */
export interface GatewaySettings {
  server: ServerConfig;
  log: LogConfig;
  store: StoreConfig;
  redis: RedisConfig;
  mysql: MysqlConfig;
  /** Users' MCP servers: how many, which stdio commands. */
  mcp: McpConfig;
  /** The key their secret values are encrypted with. */
  secrets: SecretsConfig;
  /** Its outbound allowlist decides which private addresses users' MCP servers may have. */
  tools: ToolsConfig;
  /** Whether tenants have their own settings, and how long they are cached. */
  tenancy: TenancyConfig;
  /** Whether `/metrics` is served, and the token a scrape needs. */
  metrics: MetricsConfig;
  /** The environment's price table and currency, which the admin API shows unless operators stored one. */
  pricing: PricingConfig;
  /** Runs one tenant may have queued or running at once unless it has its own max_concurrent_runs; 0: no limit. See {@link tenantRunLimit}. */
  tenantRunLimit: number;
  version: string;
}

/**
 * The config classes a gateway loads, by the name its settings give each (npm start checks them
 * all before it starts anything). WorkerConfig only for the slots of one worker, which size a
 * tenant's default share.
 */
export const GATEWAY_CONFIGS = { server: ServerConfig, log: LogConfig, store: StoreConfig, redis: RedisConfig, mysql: MysqlConfig, mcp: McpConfig, secrets: SecretsConfig, tools: ToolsConfig, tenancy: TenancyConfig, metrics: MetricsConfig, pricing: PricingConfig, worker: WorkerConfig };

export function loadGatewaySettings(version: string, env = process.env, argv = process.argv.slice(2)): GatewaySettings {
  const { worker, ...settings } = loadConfigs(GATEWAY_CONFIGS, env, argv);
  return { ...settings, tenantRunLimit: tenantRunLimit(settings.server, settings.tenancy, worker.concurrency), version };
}

/**
 * Runs one tenant may have queued or running at once when it has no max_concurrent_runs of its
 * own: DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT when set (0: no limit). Unset, one tenant has
 * nobody to be fair to: no limit. In multi-tenant mode, half the slots of one worker
 * (DATAAGENT_WORKER_CONCURRENCY), at least 1. A gateway cannot know how many workers run, but
 * there is at least one: whatever one tenant floods the queue with, the others find at least
 * half of even the smallest deployment free, rather than waiting behind the flood.
 * @param workerSlots DATAAGENT_WORKER_CONCURRENCY as the gateway sees it.
 */
export function tenantRunLimit(server: ServerConfig, tenancy: TenancyConfig, workerSlots: number): number {
  if (server.maxConcurrentRunsPerTenant !== undefined) return server.maxConcurrentRunsPerTenant;
  return tenancy.multiTenant ? Math.max(1, Math.floor(workerSlots / 2)) : 0;
}
