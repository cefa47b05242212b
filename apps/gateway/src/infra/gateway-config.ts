import { MysqlConfig, RedisConfig, ServerConfig, StorageConfig } from '#core/config/settings.js';
import { loadConfigs } from '#core/config/env.js';

/** Everything a gateway process is configured with, validated once at startup. */
export interface GatewaySettings {
  server: ServerConfig;
  redis: RedisConfig;
  mysql: MysqlConfig;
  storage: StorageConfig;
  version: string;
}

export function loadGatewaySettings(version: string, env = process.env, argv = process.argv.slice(2)): GatewaySettings {
  return { ...loadConfigs({ server: ServerConfig, redis: RedisConfig, mysql: MysqlConfig, storage: StorageConfig }, env, argv), version };
}
