import type { RedisOptions } from 'ioredis';
import { createRedis, type RedisClient, type RedisTarget } from './redis-connection.js';
import { RunEventLog } from './run-event-log.js';
import { RunEventRelay } from './run-event-relay.js';

/**
 * The Redis side that a gateway and a worker both hold: a command connection, a subscriber
 * connection, the run event log on the one and the run event relay on the other. What else
 * each builds (queue, lifecycle, control bus, HITL records) takes different arguments per process.
 */
export interface Transport {
  /** Commands (a subscribed connection takes none). */
  redis: RedisClient;
  /** In subscriber mode: session events, and whatever else the process listens to on it. */
  subscriber: RedisClient;
  log: RunEventLog;
  relay: RunEventRelay;
  /** Quits both connections. */
  close(): Promise<void>;
}

/**
 * Opens the connections and builds the log and the relay.
 * @param redis the Redis settings: its URL or cluster nodes, and how long a run's events are kept.
 * @param names each connection's name, as CLIENT LIST shows it.
 * @param commandOptions for the command connection: how long a command may wait for Redis (failFast, commandTimeout).
 */
export function openTransport(
  redis: RedisTarget & { runLogTtlSeconds: number },
  names: { commands: string; subscriber: string },
  commandOptions: RedisOptions,
): Transport {
  const commands = createRedis(redis, names.commands, commandOptions);
  // Subscriber commands wait for Redis however long it is away: the subscription must come back.
  const subscriber = createRedis(redis, names.subscriber);
  const log = new RunEventLog(commands, { retentionSeconds: redis.runLogTtlSeconds });
  const relay = new RunEventRelay(subscriber, log);
  return {
    redis: commands,
    subscriber,
    log,
    relay,
    close: async () => {
      await Promise.all([commands.quit().catch(() => undefined), relay.close()]);
    },
  };
}
