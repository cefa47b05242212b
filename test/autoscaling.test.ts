import { Queue, type ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';
import type { Socket } from 'socket.io-client';
import { connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat } from './support/event-waits.js';
import { kedaReplicas, workerScaling } from './support/k8s-manifests.js';
import { rawRequest } from './support/raw-http.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

const METRICS_TOKEN = 'autoscaling-test-metrics-token';
const SESSIONS = 50;
const RUNS = 2 * SESSIONS;

/** One reading of the figure the ScaledObject's trigger scales on, with the queue around it. */
interface Sample {
  /** What KEDA reads: the answer's value at the trigger's valueLocation. */
  figure: number;
  body: Record<string, number>;
  /** BullMQ's own counts of unfinished runs, just before and just after the reading. */
  before: number;
  after: number;
  /** What the former trigger (KEDA's redis list scaler on bull:<queue>:wait) would have read. */
  waitList: number;
  replicas: number;
}

/**
 * The worker autoscaling of k8s/worker-scaledobject.yaml against a real queue: 100 runs queued
 * while no worker takes them, then drained by a worker. The figure is read as KEDA's
 * metrics-api trigger reads it (its URL's path and Host, the bearer token, its valueLocation)
 * and turned into a replica count with KEDA's formula and the committed numbers.
 */
describe('worker autoscaling on the queue', () => {
  const scaling = workerScaling();
  let system: TestSystem;
  let redis: Redis;
  let queue: Queue;
  let socket: Socket;
  let events: EventCollector;
  const runIds: string[] = [];

  beforeAll(async () => {
    system = await TestSystem.start({
      workers: 0,
      chunkIntervalMs: 20,
      // A session's second chat queues behind its first: a worker holds it until the first is done.
      env: { DATAAGENT_MULTITASK: 'enqueue', DATAAGENT_METRICS_TOKEN: METRICS_TOKEN, DATAAGENT_CLIENT_MESSAGES_PER_SECOND: '1000' },
      // For the first test, started with the system and stopped by that test.
      extraGateways: [{ DATAAGENT_METRICS_ENABLED: 'false' }],
    });
    redis = new Redis(process.env.DATAAGENT_REDIS_URL!, { maxRetriesPerRequest: null });
    queue = new Queue(system.env.DATAAGENT_QUEUE_NAME!, { connection: redis as unknown as ConnectionOptions });
    socket = await connectChat(system.url, TEST_API_KEY);
    events = new EventCollector(socket);
  });
  afterAll(async () => {
    socket?.disconnect();
    await queue?.close();
    redis?.disconnect();
    await system?.stop();
  });

  /** GET the trigger's URL path on the gateway, as KEDA sends it (the Service's Host name). */
  async function readTrigger(headers: Record<string, string> = { authorization: `Bearer ${METRICS_TOKEN}` }) {
    return rawRequest(system.url, 'GET', scaling.url.pathname, { host: scaling.url.host, ...headers });
  }

  async function unfinished(): Promise<number> {
    const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active', 'waiting-children');
    return Object.values(counts).reduce((a, b) => a + b, 0);
  }

  async function sample(): Promise<Sample> {
    const before = await unfinished();
    const answer = await readTrigger();
    const after = await unfinished();
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.body) as Record<string, number>;
    const figure = body[scaling.valueLocation]!;
    expect(typeof figure).toBe('number');
    const waitList = await redis.llen(`bull:${queue.name}:wait`);
    return { figure, body, before, after, waitList, replicas: kedaReplicas(figure, scaling) };
  }

  it('needs the metrics token when one is set, and goes with the metrics when they are off', async () => {
    expect((await readTrigger({})).status).toBe(401);
    expect((await readTrigger({ authorization: 'Bearer not-the-token-at-all' })).status).toBe(401);
    expect((await readTrigger()).status).toBe(200);
    const off = system.extraGateways[0]!;
    try {
      expect((await rawRequest(off.url, 'GET', scaling.url.pathname, { host: scaling.url.host })).status).toBe(404);
    } finally {
      await off.stop();
    }
  });

  it('counts the 100 runs queued while no worker takes them, and asks for the workers they need', async () => {
    for (let i = 0; i < SESSIONS; i++) {
      const first = await sendChat(socket, { message: `[[chunks:10]] first ${i}` });
      const second = await sendChat(socket, { message: `[[chunks:10]] second ${i}`, session_id: first.session_id });
      expect([first.ok, second.ok]).toEqual([true, true]);
      runIds.push(first.run_id, second.run_id);
    }
    const s = await sample();
    expect(s.body).toMatchObject({ queue: queue.name, waiting: RUNS, prioritized: 0, delayed: 0, active: 0 });
    expect([s.figure, s.before, s.after]).toEqual([RUNS, RUNS, RUNS]);
    expect(s.replicas).toBe(Math.min(scaling.maxReplicaCount, Math.max(scaling.minReplicaCount, Math.ceil(RUNS / scaling.targetValue))));
    // The committed numbers scale out for this queue: the drain below has counts to come down from.
    expect(s.replicas).toBeGreaterThan(scaling.minReplicaCount + 1);
  });

  it('follows the queue down as a worker drains it, counting the runs the wait list misses', async () => {
    const initial = kedaReplicas(RUNS, scaling);
    await system.addWorker({ DATAAGENT_WORKER_CONCURRENCY: '4' });
    const samples: Sample[] = [];
    // Bounded: a drain that never ends fails here instead of hanging.
    for (let i = 0; i < 3000; i++) {
      const s = await sample();
      samples.push(s);
      if (s.figure === 0 && s.after === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const last = samples.at(-1)!;
    expect([last.figure, last.after]).toEqual([0, 0]);

    // Each reading is the queue as it was between the two counts around it (nothing new is queued, so they only go down).
    for (const s of samples) expect([s.before >= s.figure, s.figure >= s.after]).toEqual([true, true]);
    const figures = samples.map((s) => s.figure);
    const replicas = samples.map((s) => s.replicas);
    expect(figures).toEqual([...figures].sort((a, b) => b - a));
    expect(replicas).toEqual([...replicas].sort((a, b) => b - a));
    expect(replicas[0]).toBeLessThanOrEqual(initial);
    expect(last.replicas).toBe(scaling.minReplicaCount);
    // Step by step: counts between the first and the last.
    expect(replicas.some((r) => r < initial && r > scaling.minReplicaCount)).toBe(true);
    // Runs running, and those a worker holds until the earlier run of their session is done, are in the figure but not in the wait list the former trigger read.
    expect(samples.some((s) => s.body.active! > 0 && s.waitList < s.figure)).toBe(true);

    await Promise.all(runIds.map((runId) => events.done(runId, 60_000)));
    for (const runId of runIds) expect(events.ofRun(runId).at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
  }, 240_000);
});
