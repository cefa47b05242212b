import { LlmConfig, LogConfig, MetricsConfig, MysqlConfig, RedisConfig, SecretsConfig, StorageConfig, StoreConfig, TenancyConfig, WorkerConfig } from '#core/config/settings.js';
import { ConfigError, loadConfigs } from '#core/config/env.js';
import { McpRuntimeConfig } from '#core/config/mcp-settings.js';
import { SandboxConfig } from '#core/config/sandbox-settings.js';
import { McpConfig } from '#core/mcp/user-server-config.js';
import { ToolsConfig } from '#core/tools/tools-config.js';
import { PricingConfig } from '#core/usage/pricing-config.js';
import { WorkspaceConfig } from '#core/workspace/workspace-config.js';
import { missingModelSettings } from '#llm/create-chat-model.js';

/** Everything a worker process is configured with, validated once at startup. */
export interface WorkerSettings {
  worker: WorkerConfig;
  log: LogConfig;
  redis: RedisConfig;
  mysql: MysqlConfig;
  llm: LlmConfig;
  tools: ToolsConfig;
  storage: StorageConfig;
  mcp: McpRuntimeConfig;
  /** Users' servers: the per-user cap and the stdio commands they may run. */
  userMcp: McpConfig;
  /** Opens users' servers' secret values. */
  secrets: SecretsConfig;
  store: StoreConfig;
  /** Users' folders: template, quota, archiving. */
  workspace: WorkspaceConfig;
  /** Whether tenants' feature switches and workspace quotas apply, and how long they are cached. */
  tenancy: TenancyConfig;
  /** The metrics port, its address and the token a scrape needs. */
  metrics: MetricsConfig;
  /** How shell commands, skill scripts and stdio MCP servers are confined, and their limits. */
  sandbox: SandboxConfig;
  /** The environment's price table and currency; a table operators stored wins. */
  pricing: PricingConfig;
}

/** The config classes a worker loads, by the name its settings give each (npm start checks them all before it starts anything). */
export const WORKER_CONFIGS = {
  worker: WorkerConfig,
  log: LogConfig,
  redis: RedisConfig,
  mysql: MysqlConfig,
  llm: LlmConfig,
  tools: ToolsConfig,
  storage: StorageConfig,
  mcp: McpRuntimeConfig,
  userMcp: McpConfig,
  secrets: SecretsConfig,
  store: StoreConfig,
  workspace: WorkspaceConfig,
  tenancy: TenancyConfig,
  metrics: MetricsConfig,
  sandbox: SandboxConfig,
  pricing: PricingConfig,
};

export function loadWorkerSettings(env = process.env, argv = process.argv.slice(2)): WorkerSettings {
  const loaded = loadConfigs(WORKER_CONFIGS, env, argv);
  const problems: string[] = [];
  // Two tenants' users of one name would share a workspace.
  const template = loaded.workspace.rootTemplate;
  if (loaded.tenancy.multiTenant && !template.includes('{tenant_id}')) {
    problems.push(`DATAAGENT_WORKSPACE_ROOT ${JSON.stringify(template)} must contain {tenant_id} when DATAAGENT_MULTI_TENANT=true`);
  }
  // A model without its key is refused now, not at somebody's first chat.
  problems.push(...missingModelSettings(loaded.llm));
  if (problems.length > 0) throw new ConfigError(problems);
  return loaded;
}
