import { MysqlConfig, RedisConfig, ServerConfig, StorageConfig } from '#core/config/settings.js';
import { loadConfig } from '#core/config/env.js';

/** Everything a gateway process is configured with, validated once at startup. */
export interface GatewaySettings {
  server: ServerConfig;
  redis: RedisConfig;
  mysql: MysqlConfig;
  storage: StorageConfig;
  version: string;
}

export function loadGatewaySettings(version: string, env = process.env, argv = process.argv.slice(2)): GatewaySettings {
  return {
    server: loadConfig(ServerConfig, env, argv),
    redis: loadConfig(RedisConfig, env, argv),
    mysql: loadConfig(MysqlConfig, env, argv),
    storage: loadConfig(StorageConfig, env, argv),
    version,
  };
}
