import { randomUUID } from 'node:crypto';
import { harnessRedisUrl } from '#test/support/harness-redis.js';
import { createRedis, type RedisClient } from './redis-connection.js';
import { ParkedRunDeadlines } from './parked-run-deadlines.js';

/** The parked runs' deadline set and its sweep lease against the harness Redis. */

let redis: RedisClient;

beforeAll(() => {
  redis = createRedis(harnessRedisUrl(), 'spec-parked-deadlines');
});

afterAll(async () => {
  await redis?.quit();
});

async function redisNow(): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

const run = (name: string) => ({ runId: `spec-run-${name}-${randomUUID()}`, sessionId: 's', tenantId: 't' });

describe('ParkedRunDeadlines (Redis)', () => {
  it('names the runs whose deadline Redis’s clock has passed, oldest first, and no other', async () => {
    const deadlines = new ParkedRunDeadlines(redis, `spec-${randomUUID()}`);
    const now = await redisNow();
    const [older, newer, ahead] = [run('older'), run('newer'), run('ahead')];
    await deadlines.add(newer, now - 10);
    await deadlines.add(older, now - 1_000);
    await deadlines.add(ahead, now + 60_000);
    expect(await deadlines.due(10)).toEqual([
      { run: older, deadline: now - 1_000 },
      { run: newer, deadline: now - 10 },
    ]);
    expect(await deadlines.due(1)).toEqual([{ run: older, deadline: now - 1_000 }]);
  });

  it('forgets an entry only while it has the deadline the sweep read: a run that parked again keeps its new one', async () => {
    const deadlines = new ParkedRunDeadlines(redis, `spec-${randomUUID()}`);
    const now = await redisNow();
    const again = run('again');
    await deadlines.add(again, now - 100);
    const [seen] = await deadlines.due(10);
    await deadlines.add(again, now - 50);
    await deadlines.forget(seen!);
    expect(await deadlines.due(10)).toEqual([{ run: again, deadline: now - 50 }]);
    await deadlines.forget({ run: again, deadline: now - 50 });
    expect(await deadlines.due(10)).toEqual([]);
  });

  it('lets one process sweep a queue at a time; another queue sweeps on its own', async () => {
    const queue = `spec-${randomUUID()}`;
    const [first, second, other] = [new ParkedRunDeadlines(redis, queue), new ParkedRunDeadlines(redis, queue), new ParkedRunDeadlines(redis, `spec-${randomUUID()}`)];
    const release = await first.lease(10_000);
    expect(release).not.toBeNull();
    expect(await second.lease(10_000)).toBeNull();
    const otherRelease = await other.lease(10_000);
    expect(otherRelease).not.toBeNull();
    await release!();
    const next = await second.lease(10_000);
    expect(next).not.toBeNull();
    await Promise.all([next!(), otherRelease!()]);
  });
});
