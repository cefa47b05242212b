import { randomUUID } from 'node:crypto';
import { createRedis, type RedisClient } from '#transport/redis-connection.js';
import { RunQueue, type FinishedJobRetention } from '#transport/run-queue.js';
import { RunConsumer } from '#transport/run-consumer.js';
import type { RunJobData } from '#core/run/run-ports.js';

function redisUrl(): string {
  const url = process.env.DATAAGENT_REDIS_URL;
  if (!url) throw new Error('DATAAGENT_REDIS_URL is not set: run the tests through jest, whose global setup starts Redis.');
  return url;
}

const job = (runId: string): RunJobData => ({
  runId,
  sessionId: 's-1',
  tenantId: 'acme',
  userId: 'alice',
  assistantId: 'default',
  message: `the private words of ${runId}`,
  enqueuedAt: Date.now(),
});

describe('finished run jobs in Redis (real BullMQ against the harness Redis)', () => {
  const connections: RedisClient[] = [];
  const connect = (role: string) => {
    const redis = createRedis(redisUrl(), `retention-test-${role}`);
    connections.push(redis);
    return redis;
  };
  let consumer: RunConsumer | undefined;
  let queue: RunQueue | undefined;

  afterEach(async () => {
    await consumer?.close();
    await queue?.queue.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
    consumer = undefined;
    queue = undefined;
  });
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.quit().catch(() => undefined)));
  });

  it('are bounded by count, completed and failed alike, and completed ones keep no message', async () => {
    const name = `retention-${randomUUID().slice(0, 8)}`;
    const retention: FinishedJobRetention = { completed: { count: 3, age: 3600 }, failed: { count: 2, age: 3600 } };
    queue = new RunQueue(connect('producer'), name, retention);
    const total = 16;
    let finished = 0;
    const allFinished = new Promise<void>((resolve) => {
      const count = () => {
        if (++finished === total) resolve();
      };
      consumer = new RunConsumer(connect('consumer'), { name, concurrency: 4, retention }, async (j) => {
        if (j.data.runId.startsWith('fail-')) throw new Error('the run broke');
        return 'ended';
      });
      consumer.on('completed', count);
      consumer.on('failed', count);
    });
    for (let i = 0; i < total / 2; i++) {
      await queue.enqueue(job(`ok-${i}`));
      await queue.enqueue(job(`fail-${i}`));
    }
    await allFinished;

    const counts = await queue.queue.getJobCounts('completed', 'failed');
    expect(counts).toEqual({ completed: 3, failed: 2 });
    const completed = await queue.queue.getCompleted();
    expect(completed.map((j) => j.data.message)).toEqual(['', '', '']);
    expect(completed.every((j) => j.data.runId.startsWith('ok-'))).toBe(true);
  }, 60_000);

  it('are bounded by count by default too', async () => {
    const name = `retention-default-${randomUUID().slice(0, 8)}`;
    queue = new RunQueue(connect('producer-default'), name);
    await queue.enqueue(job('r-1'));
    const added = await queue.queue.getJob('r-1');
    expect(added?.opts.removeOnComplete).toEqual({ count: expect.any(Number), age: expect.any(Number) });
    expect(added?.opts.removeOnFail).toEqual({ count: expect.any(Number), age: expect.any(Number) });
  });
});
