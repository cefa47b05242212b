import { LlmConfig, McpConfig, MysqlConfig, RedisConfig, SecretsConfig, ServerConfig, StorageConfig, ToolsConfig, WorkerConfig } from '#core/config/settings.js';
import { loadConfigs } from '#core/config/env.js';
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
    { worker: WorkerConfig, redis: RedisConfig, mysql: MysqlConfig, llm: LlmConfig, tools: ToolsConfig, storage: StorageConfig, mcp: McpRuntimeConfig, userMcp: McpConfig, secrets: SecretsConfig, server: ServerConfig },
    env,
    argv,
  );
  const { server, ...rest } = loaded;
  return { ...rest, sessionStore: server.sessionStore };
}
