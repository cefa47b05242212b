import { Redis, type RedisOptions } from 'ioredis';

/**
 * Opens a Redis connection for one role (commands, subscriber, BullMQ). BullMQ requires
 * `maxRetriesPerRequest: null` on connections that block.
 */
export function createRedis(url: string, connectionName: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    connectionName,
    maxRetriesPerRequest: null,
    enableAutoPipelining: true,
    retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 2_000),
    ...options,
  });
}

/** True when Redis answers PING within `timeoutMs`. */
export async function pingRedis(redis: Redis, timeoutMs = 1_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    return (await Promise.race([redis.ping().then((r) => r === 'PONG'), timeout])) === true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
