import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis-connection.js';
import { luaScript } from './lua/lua-scripts.js';

interface LeaseCommands {
  daLease(key: string, token: string, ...extendMs: number[]): Promise<number>;
}

/** A lease a holder took: one key, one token. */
export interface Lease {
  /** Keeps the lease `ms` more from now. @returns false when it is no longer this holder's (it expired, and may be another's). */
  extend(ms: number): Promise<boolean>;
  /** Ends the lease, if it is still this holder's. */
  release(): Promise<void>;
}

/**
 * Takes the lease on `key` for `ttlMs` unless another holder has it: `SET NX PX`, so a holder
 * that dies keeps it for `ttlMs` at most. The one lease of every worker's and gateway's sweeps
 * and locks (the reaper, the workspace archiver, parked-run deadlines, sign-in refreshes,
 * session admission).
 * @returns the lease, or null when another holder has it.
 */
export async function takeLease(redis: RedisClient, key: string, ttlMs: number): Promise<Lease | null> {
  const token = randomUUID();
  if ((await redis.set(key, token, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX')) !== 'OK') return null;
  const commands = leaseCommands(redis);
  return {
    extend: async (ms) => (await commands.daLease(key, token, Math.max(1, Math.ceil(ms)))) === 1,
    release: async () => {
      await commands.daLease(key, token);
    },
  };
}

/** The script as a command of this connection (EVALSHA, loaded once per connection). */
function leaseCommands(redis: RedisClient): LeaseCommands {
  const commands = redis as unknown as Partial<LeaseCommands>;
  if (!commands.daLease) redis.defineCommand('daLease', { numberOfKeys: 1, lua: luaScript('lease-held-by') });
  return redis as unknown as LeaseCommands;
}
