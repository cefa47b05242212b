import { LlmConfig, McpConfig, MysqlConfig, RedisConfig, SecretsConfig, ServerConfig, StorageConfig, TenancyConfig, ToolsConfig, WorkerConfig } from '#core/config/settings.js';
import { ConfigError, loadConfigs } from '#core/config/env.js';
import { DEFAULT_WORKSPACE_ROOT, workspaceOptionsFromEnv } from '#core/workspace/workspace.js';
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
  sessionStore: 'mysql' | 'memory';
}

export function loadWorkerSettings(env = process.env, argv = process.argv.slice(2)): WorkerSettings {
  const loaded = loadConfigs(
    { worker: WorkerConfig, redis: RedisConfig, mysql: MysqlConfig, llm: LlmConfig, tools: ToolsConfig, storage: StorageConfig, mcp: McpRuntimeConfig, userMcp: McpConfig, secrets: SecretsConfig, server: ServerConfig, tenancy: TenancyConfig },
    env,
    argv,
  );
  const { server, tenancy, ...rest } = loaded;
  // Two tenants' users of one name would share a workspace.
  const template = workspaceOptionsFromEnv(env).rootTemplate ?? DEFAULT_WORKSPACE_ROOT;
  if (tenancy.multiTenant && !template.includes('{tenant_id}')) {
    throw new ConfigError([`DATAAGENT_WORKSPACE_ROOT ${JSON.stringify(template)} must contain {tenant_id} when DATAAGENT_MULTI_TENANT=true`]);
  }
  return { ...rest, sessionStore: server.sessionStore };
}
