import { randomUUID } from 'node:crypto';
import { harnessRedisUrl } from '#test/support/harness-redis.js';
import { createRedis, type RedisClient } from './redis-connection.js';
import { takeLease } from './redis-lease.js';

/** The one lease of the sweeps and locks, against the harness Redis: two holders racing, and a holder whose lease lapsed. */

let a: RedisClient;
let b: RedisClient;

beforeAll(() => {
  a = createRedis(harnessRedisUrl(), 'spec-lease-a');
  b = createRedis(harnessRedisUrl(), 'spec-lease-b');
});

afterAll(async () => {
  await Promise.all([a, b].map((c) => c?.quit()));
});

const key = () => `da:test:lease:${randomUUID()}`;

describe('takeLease (Redis)', () => {
  it('gives a key to one holder of many racing for it, and to the next once released', async () => {
    const k = key();
    const taken = await Promise.all(Array.from({ length: 20 }, (_, i) => takeLease(i % 2 ? a : b, k, 10_000)));
    const holders = taken.filter((lease) => lease !== null);
    expect(holders).toHaveLength(1);
    expect(await takeLease(a, k, 10_000)).toBeNull();
    await holders[0]!.release();
    expect(await a.exists(k)).toBe(0);
    expect(await takeLease(b, k, 10_000)).not.toBeNull();
  });

  it("lets a holder whose lease lapsed neither extend nor end the next holder's", async () => {
    const k = key();
    const first = (await takeLease(a, k, 30))!;
    await new Promise((resolve) => setTimeout(resolve, 60)); // the lease's own expiry is what is tested
    const second = (await takeLease(b, k, 10_000))!;
    expect(second).not.toBeNull();
    expect(await first.extend(10_000)).toBe(false);
    await first.release();
    expect(await b.exists(k)).toBe(1);
    expect(await b.pttl(k)).toBeLessThanOrEqual(10_000);
    expect(await second.extend(60_000)).toBe(true);
    expect(await b.pttl(k)).toBeGreaterThan(10_000);
    await second.release();
    expect(await b.exists(k)).toBe(0);
  });

  it('ends after its time when its holder never releases it', async () => {
    const k = key();
    // Long enough that a loaded machine still finds it held; its own expiry is what is tested, so no release.
    expect(await takeLease(a, k, 1_000)).not.toBeNull();
    expect(await takeLease(b, k, 10_000)).toBeNull();
    let taken = null;
    for (let i = 0; i < 100 && !taken; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      taken = await takeLease(b, k, 10_000);
    }
    expect(taken).not.toBeNull();
  });
});
