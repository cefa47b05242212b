import { Redis } from 'ioredis';
import { epochNow } from './clock.js';
import { pacedBursts, type PacedBurstsOptions } from './paced-bursts.js';

export interface PubSubFloorOptions extends PacedBurstsOptions {
  /** Messages sent first and not recorded. */
  warmup: number;
}

/**
 * The bare Redis pub/sub hop: a stamp taken just before PUBLISH, read in the subscriber's
 * `message` handler after JSON.parse. Two plain ioredis connections with default options; the
 * message is shaped like a DataAgent text event so its size matches the system's.
 *
 * @returns One latency in ms per recorded message.
 */
export async function measureRedisPubSubFloor(redisUrl: string, options: PubSubFloorOptions): Promise<number[]> {
  const publisher = new Redis(redisUrl);
  const subscriber = new Redis(redisUrl);
  const channel = 'bench:floor';
  const samples: number[] = [];
  let expected = 0;
  let received = 0;
  let allReceived: () => void = () => undefined;
  subscriber.on('message', (_channel: string, raw: string) => {
    const now = epochNow();
    const message = JSON.parse(raw) as { t: number; record: boolean };
    if (message.record) samples.push(now - message.t);
    if (++received === expected) allReceived();
  });
  try {
    await subscriber.subscribe(channel);
    const phase = async (total: number, record: boolean) => {
      received = 0;
      expected = total;
      const done = new Promise<void>((resolve) => (allReceived = resolve));
      await pacedBursts({ ...options, total }, (i) =>
        publisher.publish(channel, JSON.stringify({ ...textEventShape(i), t: epochNow(), record })),
      );
      await done;
    };
    await phase(options.warmup, false);
    await phase(options.total, true);
    return samples;
  } finally {
    subscriber.disconnect();
    publisher.disconnect();
  }
}

/** A body the size of a DataAgent text event. */
export function textEventShape(i: number): Record<string, unknown> {
  return {
    event_type: 'text',
    timestamp: new Date().toISOString(),
    session_id: '6f1c2b1e-0d4a-4a7e-9a55-2f7f0f0c1a11',
    run_id: '0b8f7c4e-3c2d-4f11-8e0a-5d6c7b8a9f10',
    seq: i + 1,
    content: `⟨t=${epochNow().toFixed(3)}⟩tok${i} `,
    is_final: false,
  };
}
