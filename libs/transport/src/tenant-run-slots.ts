import type { RedisClient } from './redis-connection.js';
import type { RunSlots } from '#core/run/run-ports.js';
import { redisKeys } from './redis-keys.js';
import { luaScript } from './lua/lua-scripts.js';

type TakeCommand = (key: string, max: number, now: number, runId: string) => Promise<number>;

/**
 * Each tenant's runs going at once, one Redis sorted set per tenant shared by every gateway:
 * checking the count and taking a slot is one atomic step, so a burst of 500 chats from one
 * tenant cannot all read "none going" and all get in. The gateway takes a slot before it
 * creates a run and gives it back if the run is never queued; the worker gives it back when
 * the run ends. Slots whose run ended without giving theirs back (a crash between the two)
 * are pruned against the database when a tenant looks full.
 */
export class TenantRunSlots implements RunSlots {
  constructor(private readonly redis: RedisClient) {
    if (!(redis as unknown as { tenantRunTake?: unknown }).tenantRunTake) {
      redis.defineCommand('tenantRunTake', { numberOfKeys: 1, lua: luaScript('tenant-run-take') });
    }
  }

  /** @returns null when the run got a slot, else how many runs the tenant holds. */
  async take(tenantId: string, runId: string, max: number, now = Date.now()): Promise<number | null> {
    const take = (this.redis as unknown as { tenantRunTake: TakeCommand }).tenantRunTake.bind(this.redis);
    const held = await take(redisKeys.tenantRuns(tenantId), max, now, runId);
    return held < 0 ? null : held;
  }

  async release(tenantId: string, runId: string): Promise<void> {
    await this.redis.zrem(redisKeys.tenantRuns(tenantId), runId);
  }

  /**
   * Gives back the slots taken before `before` whose runs `stillActive` does not name: runs
   * that ended while their slot was not given back. Younger slots are left alone, since their
   * runs may not be stored yet. @returns how many were given back.
   */
  async prune(tenantId: string, before: number, stillActive: (runIds: string[]) => Promise<Set<string>>): Promise<number> {
    const key = redisKeys.tenantRuns(tenantId);
    const old = await this.redis.zrangebyscore(key, '-inf', `(${before}`);
    if (old.length === 0) return 0;
    const active = await stillActive(old);
    const ended = old.filter((runId) => !active.has(runId));
    if (ended.length > 0) await this.redis.zrem(key, ...ended);
    return ended.length;
  }

  async held(tenantId: string): Promise<number> {
    return this.redis.zcard(redisKeys.tenantRuns(tenantId));
  }
}
