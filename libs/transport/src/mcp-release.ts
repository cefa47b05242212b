import type { RedisClient } from './redis-connection.js';
import { RedisChannelListener } from './redis-channel.js';
import { redisKeys } from './redis-keys.js';

/** Workers close a user's MCP connections: all of them when their sessions ended, or one server's after its config changed. */
export interface McpReleaseMessage {
  tenant_id: string;
  user_id: string;
  /** Only this server's connection; absent: all the user's. */
  server_name?: string;
  /** `signed_in` / `signed_out`: the person's sign-in to the server changed (workers record `needs_authorization` after a sign-out). */
  reason: 'sessions_ended' | 'config_changed' | 'signed_in' | 'signed_out';
}

/** Publishes releases for every worker (at most once: a worker that misses one closes the connections when idle). */
export async function announceMcpRelease(redis: RedisClient, messages: readonly McpReleaseMessage[]): Promise<void> {
  if (messages.length === 0) return;
  const pipeline = redis.pipeline();
  for (const message of messages) pipeline.publish(redisKeys.mcpReleaseChannel, JSON.stringify(message));
  const results = await pipeline.exec();
  const failed = results?.find(([err]) => err)?.[0];
  if (failed) throw failed;
}

/**
 * Subscribes `subscriber` (a connection used for nothing else) to releases.
 * @returns once subscribed.
 */
export async function listenMcpReleases(subscriber: RedisClient, handler: (message: McpReleaseMessage) => void): Promise<void> {
  await new RedisChannelListener(subscriber, { guard: mcpReleaseMessage }).listen(redisKeys.mcpReleaseChannel, handler);
}

function mcpReleaseMessage(value: unknown): McpReleaseMessage | null {
  const m = value as Partial<McpReleaseMessage> | null;
  const ok =
    typeof m?.tenant_id === 'string' &&
    typeof m.user_id === 'string' &&
    (m.server_name === undefined || typeof m.server_name === 'string') &&
    (m.reason === 'sessions_ended' || m.reason === 'config_changed' || m.reason === 'signed_in' || m.reason === 'signed_out');
  return ok ? (m as McpReleaseMessage) : null;
}
