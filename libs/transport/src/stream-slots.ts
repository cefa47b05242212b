import type { RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';
import { luaScript } from './lua/lua-scripts.js';

type TakeCommand = (keySet: string, personSet: string, now: number, until: number, slot: string, keyMax: number, personMax: number) => Promise<number>;

/** Whose stream a slot is: a person, and the key they opened it with. */
export interface StreamHolder {
  tenantId: string;
  userId: string;
  keyId: string;
}

/** Which limit refused a stream. */
export type StreamRefusal = 'key' | 'person';

/**
 * Streams held open per API key and per person, on every gateway together: one sorted set per
 * key and one per person in Redis, both checked and taken in one atomic step, so a burst of
 * connections on many gateways cannot all read "room left". A slot is given back when its
 * stream closes; each carries a lease its gateway renews, so the slots of a gateway that died
 * come back once their lease ends.
 */
export class StreamSlots {
  constructor(private readonly redis: RedisClient) {
    if (!(redis as unknown as { streamSlotTake?: unknown }).streamSlotTake) {
      redis.defineCommand('streamSlotTake', { numberOfKeys: 2, lua: luaScript('stream-slot-take') });
    }
  }

  /** @returns null when `slot` was taken until `until`, else the limit that refused it. */
  async take(holder: StreamHolder, slot: string, limits: { perKey: number; perPerson: number }, until: number, now = Date.now()): Promise<StreamRefusal | null> {
    const take = (this.redis as unknown as { streamSlotTake: TakeCommand }).streamSlotTake.bind(this.redis);
    const refused = await take(...setsOf(holder), now, until, slot, limits.perKey, limits.perPerson);
    return refused === 1 ? 'key' : refused === 2 ? 'person' : null;
  }

  /** Gives the slot back at once. */
  async giveBack(holder: StreamHolder, slot: string): Promise<void> {
    const [keySet, personSet] = setsOf(holder);
    await this.redis.multi().zrem(keySet, slot).zrem(personSet, slot).exec();
  }

  /** Extends the leases of slots still open (only those still there: one given back stays so). */
  async renew(slots: Array<{ holder: StreamHolder; slot: string }>, until: number): Promise<void> {
    // One pipeline per person: on a cluster, a pipeline's keys must share a slot.
    const byPerson = new Map<string, Array<{ holder: StreamHolder; slot: string }>>();
    for (const entry of slots) {
      const person = setsOf(entry.holder)[1];
      byPerson.set(person, [...(byPerson.get(person) ?? []), entry]);
    }
    const ttl = Math.max(1, until - Date.now());
    await Promise.all(
      [...byPerson.values()].map((entries) => {
        const pipeline = this.redis.pipeline();
        for (const { holder, slot } of entries) {
          for (const set of setsOf(holder)) pipeline.zadd(set, 'XX', until, slot).pexpire(set, ttl);
        }
        return pipeline.exec();
      }),
    );
  }

  /** How many streams the key and the person hold, leases ended or not. */
  async held(holder: StreamHolder): Promise<{ key: number; person: number }> {
    const [keySet, personSet] = setsOf(holder);
    const [key, person] = await Promise.all([this.redis.zcard(keySet), this.redis.zcard(personSet)]);
    return { key, person };
  }
}

function setsOf(holder: StreamHolder): [string, string] {
  return [redisKeys.keyStreams(holder.tenantId, holder.userId, holder.keyId), redisKeys.personStreams(holder.tenantId, holder.userId)];
}
