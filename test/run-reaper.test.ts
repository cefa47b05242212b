import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { MysqlConfig } from '#core/config/settings.js';
import { DoneEvent, RunQueuedEvent } from '#core/events/execution-event.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { createConversationStore } from '#persistence/create-conversation-store.js';
import { RunEventLog } from '#transport/run-event-log.js';
import { RunQueue } from '#transport/run-queue.js';
import { api } from './support/chat-clients.js';
import { mysqlSettings } from './support/databases.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

describe('runs nobody holds are ended', () => {
  let system: TestSystem;
  let store: ConversationStore;
  let redis: Redis;
  let log: RunEventLog;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_REAPER_INTERVAL_MS: '300' } });
    const env = system.env;
    store = await createConversationStore('mysql', { ...mysqlSettings(env), poolSize: 2 } as MysqlConfig);
    redis = new Redis(process.env.DATAAGENT_REDIS_URL!);
    log = new RunEventLog(redis, { retentionSeconds: 600 });
  });
  afterAll(async () => {
    redis?.disconnect();
    await store?.close();
    await system?.stop();
  });

  /** A session and a run as the gateway writes them, with no job in the queue. */
  async function orphanRun(): Promise<{ sessionId: string; runId: string }> {
    const { body: session } = await api(system.url, 'POST', '/sessions', { apiKey: TEST_API_KEY, body: {} });
    const runId = randomUUID();
    await store.runs.create({ runId, sessionId: session.session_id, tenantId: 'acme', userId: 'alice', assistantId: session.assistant_id });
    await store.messages.append([{ sessionId: session.session_id, runId, role: 'user', content: 'lost on the way', metadata: {} }]);
    return { sessionId: session.session_id, runId };
  }

  async function finalStatus(runId: string): Promise<string> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const run = await store.runs.get(runId);
      if (run && run.status !== 'queued' && run.status !== 'running') return run.status;
      if (Date.now() > deadline) throw new Error(`run ${runId} is still ${run?.status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('ends a run whose job was never queued with error and done, so its session takes chats again', async () => {
    const { sessionId, runId } = await orphanRun();
    await log.append(new RunQueuedEvent({ sessionId, runId }).toDict());
    expect(await finalStatus(runId)).toBe('lost');
    const events = await log.range(runId, 0);
    expect(events.map((e) => [e.seq, e.event_type])).toEqual([[1, 'run_queued'], [2, 'error'], [3, 'done']]);
    expect(events[1]).toMatchObject({ error_code: 'run_lost', recoverable: false });
    expect(await store.events.list(runId, 0)).toEqual(events);
    const next = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { session_id: sessionId, message: 'again' } });
    expect(next.status).toBe(200);
  });

  it('gives a run whose done went out, but whose final write did not land, the status its log says', async () => {
    const { sessionId, runId } = await orphanRun();
    await log.append(new RunQueuedEvent({ sessionId, runId }).toDict());
    await log.append(new DoneEvent({ sessionId, runId }, true, 'cancelled').toDict());
    expect(await finalStatus(runId)).toBe('cancelled');
    expect((await log.range(runId, 0)).map((e) => e.event_type)).toEqual(['run_queued', 'done']);
  });

  it('leaves runs that a worker holds alone', async () => {
    const res = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { message: '[[chunks:30]] [[slow:100]]' } });
    expect(res.status).toBe(200);
    const events = res.body.events as Array<{ event_type: string; error_code?: string }>;
    expect(events.some((e) => e.error_code === 'run_lost')).toBe(false);
    expect(events.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
    expect(await finalStatus(res.body.run_id)).toBe('completed');
  });
});

describe('a run whose job failed (it broke, or passed its stall limit)', () => {
  it('is ended by the reaper with error and done, and its session takes chats again', async () => {
    const system = await TestSystem.start({ workers: 0, env: { DATAAGENT_REAPER_INTERVAL_MS: '300' } });
    const redis = new Redis(process.env.DATAAGENT_REDIS_URL!, { maxRetriesPerRequest: null });
    const store = await createConversationStore('mysql', { ...mysqlSettings(system.env), poolSize: 2 } as MysqlConfig);
    const queue = new RunQueue(redis, system.env.DATAAGENT_QUEUE_NAME!);
    const log = new RunEventLog(redis, { retentionSeconds: 600 });
    try {
      const { body: session } = await api(system.url, 'POST', '/sessions', { apiKey: TEST_API_KEY, body: {} });
      const runId = randomUUID();
      const sessionId = session.session_id as string;
      await store.runs.create({ runId, sessionId, tenantId: 'acme', userId: 'alice', assistantId: session.assistant_id });
      await log.append(new RunQueuedEvent({ sessionId, runId }).toDict());
      await queue.enqueue({ runId, sessionId, tenantId: 'acme', userId: 'alice', assistantId: session.assistant_id, message: 'x', enqueuedAt: Date.now() });
      // A consumer that fails the job, as BullMQ does once a job passes its stall limit.
      const consumerConnection = redis.duplicate();
      const failing = new Worker(system.env.DATAAGENT_QUEUE_NAME!, async () => Promise.reject(new Error('job stalled more than allowable limit')), { connection: consumerConnection as never });
      await new Promise((resolve) => failing.once('failed', resolve));
      await failing.close();
      consumerConnection.disconnect();
      expect(await queue.jobState(runId)).toBe('failed');

      await system.addWorker();
      const deadline = Date.now() + 20_000;
      while ((await store.runs.get(runId))?.status === 'queued') {
        if (Date.now() > deadline) throw new Error('the reaper did not end the run');
        await new Promise((r) => setTimeout(r, 100));
      }
      expect((await store.runs.get(runId))?.status).toBe('lost');
      const events = await log.range(runId, 0);
      expect(events.map((e) => e.event_type)).toEqual(['run_queued', 'error', 'done']);
      expect(events[1]).toMatchObject({ error_code: 'run_lost' });
      const next = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { session_id: sessionId, message: 'again' } });
      expect(next.status).toBe(200);
    } finally {
      await queue.close();
      redis.disconnect();
      await store.close();
      await system.stop();
    }
  });
});
