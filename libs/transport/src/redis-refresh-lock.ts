import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis-connection.js';
import type { RefreshLock } from '#core/mcp/mcp-oauth-store.js';
import { redisKeys } from './redis-keys.js';

/** Deletes the lock only while it still holds this holder's token (a lock that expired may be another's now). */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * The refresh lock of a person's sign-in, shared by every worker: SET NX with an expiry, so a
 * worker that dies holding it holds it for `ttlMs` at most. Lock keys are
 * `JSON [tenant, user, server]`, as McpOAuthSession makes them.
 */
export class RedisRefreshLock implements RefreshLock {
  constructor(private readonly redis: RedisClient) {}

  async tryAcquire(key: string, ttlMs: number): Promise<(() => Promise<void>) | null> {
    const [tenantId, userId, server] = JSON.parse(key) as [string, string, string];
    const redisKey = redisKeys.mcpOAuthRefreshLock(tenantId, userId, server);
    const token = randomUUID();
    if ((await this.redis.set(redisKey, token, 'PX', ttlMs, 'NX')) !== 'OK') return null;
    return async () => {
      await this.redis.eval(RELEASE, 1, redisKey, token);
    };
  }
}
