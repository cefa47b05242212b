import { LlmConfig, MysqlConfig, RedisConfig, ServerConfig, StorageConfig, ToolsConfig, WorkerConfig } from '#core/config/settings.js';
import { loadConfig } from '#core/config/env.js';

/** Everything a worker process is configured with, validated once at startup. */
export interface WorkerSettings {
  worker: WorkerConfig;
  redis: RedisConfig;
  mysql: MysqlConfig;
  llm: LlmConfig;
  tools: ToolsConfig;
  storage: StorageConfig;
  sessionStore: 'mysql' | 'memory';
}

export function loadWorkerSettings(env = process.env, argv = process.argv.slice(2)): WorkerSettings {
  return {
    worker: loadConfig(WorkerConfig, env, argv),
    redis: loadConfig(RedisConfig, env, argv),
    mysql: loadConfig(MysqlConfig, env, argv),
    llm: loadConfig(LlmConfig, env, argv),
    tools: loadConfig(ToolsConfig, env, argv),
    storage: loadConfig(StorageConfig, env, argv),
    sessionStore: loadConfig(ServerConfig, env, argv).sessionStore,
  };
}
