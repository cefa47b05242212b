import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
// @ts-expect-error plain JS module shared with the benchmarks
import { startRedisCluster } from '../scripts/redis-cluster.mjs';
import { isRunning, processTable } from './support/process-tree.js';

interface RedisClusterHandle {
  seeds: string;
  nodes: Array<{ port: number; pid: number }>;
  startedInMs: number;
  masters(): Promise<Array<{ port: number; slots: Array<[number, number]> }>>;
  masterOfSlot(slot: number): Promise<number>;
  kill(port: number): Promise<void>;
  waitForFailover(deadPort: number, timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

/** How many keys one node holds, asked of that node alone. */
async function keysOn(port: number): Promise<number> {
  const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await redis.connect();
    return await redis.dbsize();
  } finally {
    redis.disconnect();
  }
}

describe('the loopback Redis Cluster harness (scripts/redis-cluster.mjs)', () => {
  let dir: string;
  let cluster: RedisClusterHandle | undefined;
  let client: Cluster | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-redis-cluster-'));
    cluster = await startRedisCluster({ dir, masters: 3, replicasPerMaster: 1 });
  });
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves keys from every master and sharded pub/sub, fails a killed master over to its replica, and stops every node', async () => {
    const c = cluster!;
    expect(c.nodes).toHaveLength(6);
    expect(c.seeds.split(',')).toEqual(c.nodes.map((n) => `127.0.0.1:${n.port}`));
    const masters = await c.masters();
    expect(masters).toHaveLength(3);
    expect(masters.flatMap((m) => m.slots).reduce((sum, [a, b]) => sum + b - a + 1, 0)).toBe(16_384);

    const seeds = c.seeds.split(',').map((s) => ({ host: '127.0.0.1', port: Number(s.split(':')[1]) }));
    client = new Cluster(seeds, { shardedSubscribers: true });
    const clientErrors: Error[] = [];
    client.on('error', (error: Error) => clientErrors.push(error));

    // Keys land on every master and read back through the cluster client.
    const keys = Array.from({ length: 60 }, (_, i) => `harness-key-${i}`);
    await Promise.all(keys.map((key) => client!.set(key, `value of ${key}`)));
    expect(await Promise.all(keys.map((key) => client!.get(key)))).toEqual(keys.map((key) => `value of ${key}`));
    const perMaster = await Promise.all(masters.map((m) => keysOn(m.port)));
    expect(perMaster.every((count) => count > 0)).toBe(true);
    expect(perMaster.reduce((a, b) => a + b, 0)).toBe(keys.length);

    // Sharded pub/sub: a message on a hash-tagged channel reaches the shard's subscriber.
    const channel = 'harness{shard}:events';
    const received = new Promise<[string, string]>((resolve) => client!.on('smessage', (ch: string, message: string) => resolve([ch, message])));
    await client.ssubscribe(channel);
    await client.spublish(channel, 'hello shard');
    expect(await received).toEqual([channel, 'hello shard']);
    // The channel's slot is on the master killed below. ioredis 5.11 would retry a subscriber of a
    // dead shard every few ms (an 'error' event each time) and, once disconnected, still keep
    // a slots-refresh timer pending for ~2 s, holding jest open: this test checks the harness, not that.
    await client.sunsubscribe(channel);

    // Kill the master of a key's slot: its replica takes over and the same client writes again.
    const key = 'harness{failover}';
    await client.set(key, 'before');
    const slot = Number(await client.cluster('KEYSLOT', key));
    const deadPort = await c.masterOfSlot(slot);
    const killedAt = Date.now();
    await c.kill(deadPort);
    const promoted = await c.waitForFailover(deadPort);
    process.stderr.write(`[redis cluster harness] started in ${c.startedInMs} ms; failover ${deadPort} -> ${promoted} in ${Date.now() - killedAt} ms\n`);
    expect(promoted).not.toBe(deadPort);
    expect(c.nodes.map((n) => n.port)).toContain(promoted);
    expect(await c.masterOfSlot(slot)).toBe(promoted);
    expect(await client.set(key, 'after')).toBe('OK');
    expect(await client.get(key)).toBe('after');

    // Stopping leaves no node running, and a second stop is harmless.
    client.disconnect();
    client = undefined;
    await c.stop();
    await c.stop();
    const table = processTable();
    expect(c.nodes.filter((n) => isRunning(n.pid, table))).toEqual([]);
  }, 30_000);
});
