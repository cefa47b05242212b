import { McpConfig, MetricsConfig, MysqlConfig, RedisConfig, SecretsConfig, ServerConfig, StoreConfig, TenancyConfig, ToolsConfig } from '#core/config/settings.js';
import { loadConfigs } from '#core/config/env.js';

/** Everything a gateway process is configured with, validated once at startup. */
export interface GatewaySettings {
  server: ServerConfig;
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
  version: string;
}

export function loadGatewaySettings(version: string, env = process.env, argv = process.argv.slice(2)): GatewaySettings {
  const classes = { server: ServerConfig, store: StoreConfig, redis: RedisConfig, mysql: MysqlConfig, mcp: McpConfig, secrets: SecretsConfig, tools: ToolsConfig, tenancy: TenancyConfig, metrics: MetricsConfig };
  return { ...loadConfigs(classes, env, argv), version };
}
