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

/**
 * Options for a connection that serves requests (the gateway's commands): a command fails
 * after one reconnection attempt or `commandTimeoutMs`, instead of waiting in the offline
 * queue for as long as Redis is down. Blocking BullMQ workers and subscribers keep the default.
 */
export function failFast(commandTimeoutMs = 3_000): RedisOptions {
  return { maxRetriesPerRequest: 1, commandTimeout: commandTimeoutMs };
}

/** Whether an error from ioredis means Redis could not be reached (down, restarting, timed out). */
export function isRedisUnavailable(err: unknown): boolean {
  const e = err as { name?: unknown; message?: unknown } | undefined;
  if (e?.name === 'MaxRetriesPerRequestError') return true;
  return typeof e?.message === 'string' && /^(Connection is closed|Command timed out|Stream isn't writeable|Reached the max retries per request limit)/.test(e.message);
}
