import { randomUUID } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import { harnessRedisUrl } from '#test/support/harness-redis.js';
import { createRedis, type RedisClient } from './redis-connection.js';
import { RunConsumer } from './run-consumer.js';
import { RunQueue } from './run-queue.js';
import type { RunJobData } from '#core/run/run-ports.js';

/** A TCP proxy to Redis that holds every client → Redis chunk for `delayMs`: a slow link, so each round trip costs at least that. */
async function slowLink(target: URL, delayMs: number): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.on('data', (chunk) => setTimeout(() => upstream.write(chunk), delayMs));
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const job = (runId: string): RunJobData => ({ runId, sessionId: 's', tenantId: 't', userId: 'u', assistantId: 'a', message: 'm', enqueuedAt: Date.now() });

describe('RunConsumer (Redis behind a slow link)', () => {
  const connections: RedisClient[] = [];
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.quit().catch(() => undefined)));
  });

  it('starts each run soon after taking it, so a burst larger than one take at a time keeps every lock and runs each job once', async () => {
    // 8 ms a round trip: one BullMQ Worker of 240 slots takes the burst one job per round trip,
    // about 2 s, and starts none before it has them all; the first ones' 1.5 s locks lapse
    // meanwhile and the stalled check hands them out again. 15 Workers of 16 take them side by
    // side and start each within about 16 round trips; their locks are renewed every 0.75 s.
    const link = await slowLink(new URL(harnessRedisUrl()), 8);
    const name = `consumer-${randomUUID().slice(0, 8)}`;
    const direct = createRedis(harnessRedisUrl(), 'spec-consumer-producer');
    const slow = createRedis(link.url, 'spec-consumer');
    connections.push(direct, slow);
    const queue = new RunQueue(direct, name);
    const total = 240;
    const starts = new Map<string, number>();
    let stalled = 0;
    let allStarted: () => void = () => undefined;
    const everyOneStarted = new Promise<void>((resolve) => (allStarted = resolve));
    const consumer = new RunConsumer(slow, { name, concurrency: total, lockDurationMs: 1_500, stalledIntervalMs: 300 }, async (j) => {
      starts.set(j.data.runId, (starts.get(j.data.runId) ?? 0) + 1);
      if (starts.size === total) allStarted();
      // Each run lasts until the whole burst has started (at most 5 s), as chats that stream for seconds do.
      await Promise.race([everyOneStarted, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
      return 'ended';
    });
    consumer.on('stalled', () => stalled++);
    try {
      expect(consumer.fetchers).toBe(15);
      await queue.queue.addBulk(Array.from({ length: total }, (_, i) => ({ name: 'run', data: job(`run-${i}`), opts: { jobId: `run-${i}` } })));
      const deadline = Date.now() + 20_000;
      let completed = 0;
      while (completed < total && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        completed = (await queue.queue.getJobCounts('completed')).completed ?? 0;
      }
      expect({ stalled, startedTwice: [...starts.values()].filter((n) => n > 1).length, started: starts.size, completed }).toEqual({ stalled: 0, startedTwice: 0, started: total, completed: total });
    } finally {
      await consumer.close();
      await queue.close();
      await link.close();
    }
  }, 60_000);

  it('serves its slots with Workers of 16, and with no more than 64 Workers however many slots', async () => {
    const redis = createRedis(harnessRedisUrl(), 'spec-consumer-sizes');
    connections.push(redis);
    const sizes: Array<[number, number]> = [];
    for (const concurrency of [1, 16, 17, 200, 10_000]) {
      const consumer = new RunConsumer(redis, { name: `sizes-${randomUUID().slice(0, 8)}`, concurrency }, async () => 'ended');
      sizes.push([concurrency, consumer.fetchers]);
      await consumer.close();
    }
    expect(sizes).toEqual([[1, 1], [16, 1], [17, 2], [200, 13], [10_000, 64]]);
  }, 60_000);
});
