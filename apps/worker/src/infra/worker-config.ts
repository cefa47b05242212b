import { LlmConfig, MysqlConfig, RedisConfig, ServerConfig, StorageConfig, ToolsConfig, WorkerConfig } from '#core/config/settings.js';
import { loadConfigs } from '#core/config/env.js';

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
  const loaded = loadConfigs(
    { worker: WorkerConfig, redis: RedisConfig, mysql: MysqlConfig, llm: LlmConfig, tools: ToolsConfig, storage: StorageConfig, server: ServerConfig },
    env,
    argv,
  );
  const { server, ...rest } = loaded;
  return { ...rest, sessionStore: server.sessionStore };
}
