import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

/**
 * A connection to the single Redis or to the Redis Cluster: ioredis gives both the same
 * commands. Where the two differ (sharded pub/sub, BullMQ's prefix, a batch's slots) the code
 * asks {@link isCluster}.
 */
export type RedisClient = Redis | Cluster;

/** Where Redis is: the URL of a single Redis, or a cluster's seed nodes with the URL's credentials and TLS. */
export interface RedisTarget {
  url: string;
  /** `host:port` seed nodes; empty or absent: the single Redis at `url`. */
  clusterNodes?: readonly string[];
}

/** Whether `redis` talks to a Redis Cluster. */
export function isCluster(redis: RedisClient): redis is Cluster {
  return (redis as { isCluster?: boolean }).isCluster === true;
}

/**
 * Opens a Redis connection for one role (commands, subscriber, BullMQ). BullMQ requires
 * `maxRetriesPerRequest: null` on connections that block. On a cluster the connection follows
 * slot moves and failovers by itself, and subscribes to sharded channels on each master.
 */
export function createRedis(target: RedisTarget | string, connectionName: string, options: RedisOptions = {}): RedisClient {
  const { url, clusterNodes = [] } = typeof target === 'string' ? { url: target } : target;
  const base: RedisOptions = {
    connectionName,
    maxRetriesPerRequest: null,
    enableAutoPipelining: true,
    retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 2_000),
    ...options,
  };
  if (clusterNodes.length === 0) return new Redis(url, base);
  const { retryStrategy, enableAutoPipelining: _perProcess, ...perNode } = base;
  const clusterOptions: ClusterOptions = {
    redisOptions: { ...credentialsOf(url), ...perNode },
    // Off on a cluster: an auto-pipelined batch mixes the slots of one master, and when a
    // failover moves some of them ioredis follows the MOVED only for a batch whose every error is
    // the same, so the rest failed outright. Sent alone, each command follows its slot. The run
    // event log batches a turn's appends itself, per slot.
    enableAutoPipelining: false,
    clusterRetryStrategy: (attempt) => retryStrategy?.(attempt) ?? 2_000,
    shardedSubscribers: true,
    // A failover moves a master's slots: commands wait for the new map instead of failing at once.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 100,
    maxRedirections: 32,
    slotsRefreshTimeout: 2_000,
  };
  return new Cluster(clusterNodes.map(seedNode), clusterOptions);
}

/** A seed node `host:port` (an IPv6 host in brackets) as ioredis takes it. */
function seedNode(entry: string): { host: string; port: number } {
  const colon = entry.lastIndexOf(':');
  return { host: entry.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(entry.slice(colon + 1)) };
}

/** The user, password and TLS of a `redis://` or `rediss://` URL, which every node of a cluster takes (its host, port and database go unused). */
function credentialsOf(url: string): RedisOptions {
  const parsed = new URL(url);
  const options: RedisOptions = {};
  if (parsed.username) options.username = decodeURIComponent(parsed.username);
  if (parsed.password) options.password = decodeURIComponent(parsed.password);
  if (parsed.protocol === 'rediss:') options.tls = {};
  return options;
}

/** True when Redis answers PING within `timeoutMs`. */
export async function pingRedis(redis: RedisClient, timeoutMs = 1_000): Promise<boolean> {
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
  if (e?.name === 'MaxRetriesPerRequestError' || e?.name === 'ClusterAllFailedError') return true;
  return typeof e?.message === 'string' && /^(Connection is closed|Command timed out|Stream isn't writeable|Reached the max retries per request limit|CLUSTERDOWN|Failed to refresh slots cache|None of startup nodes is available)/.test(e.message);
}
