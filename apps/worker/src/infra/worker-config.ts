import { LlmConfig, McpConfig, MysqlConfig, RedisConfig, SecretsConfig, StorageConfig, StoreConfig, TenancyConfig, ToolsConfig, WorkerConfig, WorkspaceConfig } from '#core/config/settings.js';
import { ConfigError, loadConfigs } from '#core/config/env.js';
import { McpRuntimeConfig } from '#core/config/mcp-settings.js';

/** Everything a worker process is configured with, validated once at startup. */
export interface WorkerSettings {
  worker: WorkerConfig;
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
}

export function loadWorkerSettings(env = process.env, argv = process.argv.slice(2)): WorkerSettings {
  const loaded = loadConfigs(
    { worker: WorkerConfig, redis: RedisConfig, mysql: MysqlConfig, llm: LlmConfig, tools: ToolsConfig, storage: StorageConfig, mcp: McpRuntimeConfig, userMcp: McpConfig, secrets: SecretsConfig, store: StoreConfig, workspace: WorkspaceConfig, tenancy: TenancyConfig },
    env,
    argv,
  );
  // Two tenants' users of one name would share a workspace.
  const template = loaded.workspace.rootTemplate;
  if (loaded.tenancy.multiTenant && !template.includes('{tenant_id}')) {
    throw new ConfigError([`DATAAGENT_WORKSPACE_ROOT ${JSON.stringify(template)} must contain {tenant_id} when DATAAGENT_MULTI_TENANT=true`]);
  }
  return loaded;
}
