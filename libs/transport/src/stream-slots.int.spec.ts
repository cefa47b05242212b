import { randomUUID } from 'node:crypto';
import { harnessRedisUrl } from '#test/support/harness-redis.js';
import { createRedis, type RedisClient } from './redis-connection.js';
import { StreamSlots, type StreamHolder } from './stream-slots.js';

/** Stream slots per key and per person against the harness Redis, as two gateways share them. */

let redis: RedisClient;
let otherGateway: RedisClient;

beforeAll(() => {
  redis = createRedis(harnessRedisUrl(), 'spec-streams');
  otherGateway = createRedis(harnessRedisUrl(), 'spec-streams-2');
});

afterAll(async () => {
  await Promise.all([redis, otherGateway].map((c) => c?.quit()));
});

const person = () => ({ tenantId: `t-${randomUUID()}`, userId: 'alice' });
const limits = { perKey: 3, perPerson: 4 };

describe('StreamSlots', () => {
  it('lets a burst on two gateways take exactly the key cap, then the person cap across keys', async () => {
    const who = person();
    const key1: StreamHolder = { ...who, keyId: 'k1' };
    const key2: StreamHolder = { ...who, keyId: 'k2' };
    const [a, b] = [new StreamSlots(redis), new StreamSlots(otherGateway)];
    const until = Date.now() + 60_000;
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).take(key1, `s${i}`, limits, until)));
    expect(burst.filter((r) => r === null)).toHaveLength(3);
    expect(new Set(burst.filter((r) => r !== null))).toEqual(new Set(['key']));
    const other = await Promise.all(Array.from({ length: 5 }, (_, i) => a.take(key2, `o${i}`, limits, until)));
    expect(other.filter((r) => r === null)).toHaveLength(1);
    expect(new Set(other.filter((r) => r !== null))).toEqual(new Set(['person']));
    expect(await a.held(key1)).toEqual({ key: 3, person: 4 });
  });

  it('gives a slot back from either gateway', async () => {
    const holder: StreamHolder = { ...person(), keyId: 'k' };
    const [a, b] = [new StreamSlots(redis), new StreamSlots(otherGateway)];
    const until = Date.now() + 60_000;
    for (const slot of ['s1', 's2', 's3']) expect(await a.take(holder, slot, limits, until)).toBeNull();
    expect(await b.take(holder, 's4', limits, until)).toBe('key');
    await a.giveBack(holder, 's2');
    expect(await b.take(holder, 's4', limits, until)).toBeNull();
    expect(await a.held(holder)).toEqual({ key: 3, person: 3 });
  });

  it("takes back the slots of a gateway that stopped renewing their lease, and keeps renewed ones", async () => {
    const holder: StreamHolder = { ...person(), keyId: 'k' };
    const slots = new StreamSlots(redis);
    const now = Date.now();
    expect(await slots.take(holder, 'dead', limits, now + 1_000, now)).toBeNull();
    expect(await slots.take(holder, 'alive', limits, now + 1_000, now)).toBeNull();
    await slots.renew([{ holder, slot: 'alive' }], now + 60_000);
    // Later than the dead slot's lease: taking drops it, and the renewed one stays.
    expect(await slots.take(holder, 'new', limits, now + 60_000, now + 2_000)).toBeNull();
    expect(await slots.held(holder)).toEqual({ key: 2, person: 2 });
  });

  it('does not renew a slot given back', async () => {
    const holder: StreamHolder = { ...person(), keyId: 'k' };
    const slots = new StreamSlots(redis);
    expect(await slots.take(holder, 's', limits, Date.now() + 60_000)).toBeNull();
    await slots.giveBack(holder, 's');
    await slots.renew([{ holder, slot: 's' }], Date.now() + 60_000);
    expect(await slots.held(holder)).toEqual({ key: 0, person: 0 });
  });
});
