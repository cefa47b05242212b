import type { RedisClient } from './redis-connection.js';
import type { RefreshLock } from '#core/mcp/mcp-oauth-store.js';
import { redisKeys } from './redis-keys.js';
import { takeLease } from './redis-lease.js';

/**
 * The refresh lock of a person's sign-in, shared by every worker: SET NX with an expiry, so a
 * worker that dies holding it holds it for `ttlMs` at most. Lock keys are
 * `JSON [tenant, user, server]`, as McpOAuthSession makes them.
 */
export class RedisRefreshLock implements RefreshLock {
  constructor(private readonly redis: RedisClient) {}

  async tryAcquire(key: string, ttlMs: number): Promise<(() => Promise<void>) | null> {
    const [tenantId, userId, server] = JSON.parse(key) as [string, string, string];
    const lease = await takeLease(this.redis, redisKeys.mcpOAuthRefreshLock(tenantId, userId, server), ttlMs);
    return lease && (() => lease.release());
  }
}
