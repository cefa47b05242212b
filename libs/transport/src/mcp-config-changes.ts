import type { RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';
import type { McpConfigChangedEvent, UserEventMessage } from './user-event-bus.js';

/**
 * Tells workers and the user's sockets that a user's MCP servers changed, in one round trip:
 * raises {@link redisKeys.mcpConfigVersion} (workers reload from the next run), drops the
 * server's status (it described another config, or a server of that name deleted before), and
 * publishes `mcp_config_changed` for every gateway to relay.
 */
export async function announceMcpConfigChange(
  redis: RedisClient,
  tenantId: string,
  userId: string,
  serverName: string,
  change: McpConfigChangedEvent['change'],
): Promise<McpConfigChangedEvent> {
  const event: McpConfigChangedEvent = { event_type: 'mcp_config_changed', server_name: serverName, change, timestamp: new Date().toISOString() };
  const message: UserEventMessage = { tenant_id: tenantId, user_id: userId, event };
  const results = await redis
    .multi()
    .incr(redisKeys.mcpConfigVersion(tenantId, userId))
    .hdel(redisKeys.mcpStatus(tenantId, userId), serverName)
    .publish(redisKeys.userEventsChannel, JSON.stringify(message))
    .exec();
  const failed = results?.find(([err]) => err)?.[0];
  if (failed) throw failed;
  return event;
}
