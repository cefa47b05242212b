import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { epochNow } from './clock.js';
import { pacedBursts, type PacedBurstsOptions } from './paced-bursts.js';

export interface BullmqFloorOptions extends PacedBurstsOptions {
  /** Jobs sent first and not recorded (connections, scripts and JIT warm up). */
  warmup: number;
  /** The Worker's concurrency. */
  concurrency: number;
}

/**
 * The bare BullMQ hop: a stamp taken just before `queue.add`, read when the `Worker`'s
 * processor is invoked. Producer and consumer use their own connections to the bench's Redis,
 * with BullMQ's defaults, on a throw-away queue that is obliterated afterwards.
 *
 * @param redisUrl e.g. `redis://127.0.0.1:6379`.
 * @returns One latency in ms per recorded job.
 */
export async function measureBullmqFloor(redisUrl: string, options: BullmqFloorOptions): Promise<number[]> {
  const { hostname, port } = new URL(redisUrl);
  const connection = { host: hostname, port: Number(port), maxRetriesPerRequest: null };
  const name = `bench-floor-${randomUUID().slice(0, 8)}`;
  const queue = new Queue<{ t: number; record: boolean }>(name, { connection, defaultJobOptions: { removeOnComplete: true, removeOnFail: true } });
  const samples: number[] = [];
  let expected = 0;
  let processed = 0;
  let allProcessed: () => void = () => undefined;
  const worker = new Worker<{ t: number; record: boolean }>(
    name,
    async (job) => {
      const now = epochNow();
      if (job.data.record) samples.push(now - job.data.t);
      if (++processed === expected) allProcessed();
    },
    { connection, concurrency: options.concurrency },
  );
  try {
    await worker.waitUntilReady();
    await queue.waitUntilReady();
    const phase = async (total: number, record: boolean) => {
      processed = 0;
      expected = total;
      const done = new Promise<void>((resolve) => (allProcessed = resolve));
      await pacedBursts({ ...options, total }, () => queue.add('floor', { t: epochNow(), record }));
      await done;
    };
    await phase(options.warmup, false);
    await phase(options.total, true);
    return samples;
  } finally {
    await worker.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  }
}
