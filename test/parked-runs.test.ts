import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { EventDict } from '#core/events/execution-event.js';
import { createConversationStore } from '#persistence/create-conversation-store.js';
import type { MysqlConfig } from '#core/config/settings.js';
import { RunQueue } from '#transport/run-queue.js';
import { api, assertWellFormedRun, connectChat, continuedView } from './support/chat-clients.js';
import { mysqlSettings } from './support/databases.js';
import { EventCollector, runEvent, sendChat, waitUntil } from './support/event-waits.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

const write = (path: string) => `[[tool:write_file {"path":"${path}","content":"parked"}]]`;

/** The event types a run shows, in order: a parked run's continuation adds nothing to them. */
const kinds = (run: EventDict[]) => run.map((e) => e.event_type);

describe('runs waiting for a person are parked: they hold no worker slot', () => {
  let system: TestSystem;
  let redis: Redis;
  let queue: RunQueue;
  const fileOf = (path: string) => join(system.dataDir, 'workspaces', 'acme', 'alice', path);

  beforeAll(async () => {
    // One worker of five slots; the approvals wait long enough that nothing here expires by itself.
    system = await TestSystem.start({ workers: [{ DATAAGENT_WORKER_ID: 'first', DATAAGENT_WORKER_CONCURRENCY: '5' }], env: { DATAAGENT_HITL_TIMEOUT: '300' } });
    redis = new Redis(process.env.DATAAGENT_REDIS_URL!, { maxRetriesPerRequest: null });
    queue = new RunQueue(redis, system.env.DATAAGENT_QUEUE_NAME!);
  });
  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    await system?.stop();
  });

  it('50 waiting runs leave another user’s chat free to run; approved, each continues once on any worker, and a kill -9 loses nothing', async () => {
    const alice = await connectChat(system.url, TEST_API_KEY);
    const bob = await connectChat(system.url, OTHER_API_KEY);
    const events = new EventCollector(alice);
    const bobs = new EventCollector(bob);
    const store = await createConversationStore('mysql', { ...mysqlSettings(system.env), poolSize: 2 } as MysqlConfig);
    try {
      const waiting = await Promise.all(Array.from({ length: 50 }, (_, i) => sendChat(alice, { message: write(`files/parked-${i}.txt`) })));
      const requests = await Promise.all(waiting.map((w) => events.next(runEvent(w.run_id, 'hitl_request'), 60_000)));
      // Parked: every job left the active set (delayed until its question expires), and every row says waiting.
      await waitUntil(async () => (await queue.depth()).delayed === 50, 30_000);
      expect((await queue.depth()).active).toBe(0);
      const rows = await Promise.all(waiting.map((w) => store.runs.get(w.run_id)));
      expect(rows.map((r) => r?.status)).toEqual(waiting.map(() => 'waiting'));

      // Five slots, fifty runs waiting: without parking bob's chat would wait for their expiry (300 s).
      const other = await sendChat(bob, { message: '[[chunks:5]]' });
      expect((await bobs.done(other.run_id, 20_000)).cancelled).toBe(false);
      expect(waiting.every((w) => !events.ofRun(w.run_id).some((e) => e.event_type === 'done'))).toBe(true);

      // Any worker continues them: a second one joins, and the first is killed while they continue.
      await system.addWorker({ DATAAGENT_WORKER_ID: 'second', DATAAGENT_WORKER_CONCURRENCY: '5' });
      const decided = await Promise.all(requests.map((r) => api(system.url, 'POST', `/hitl/${encodeURIComponent(r.request_id)}`, { apiKey: TEST_API_KEY, body: { decision: 'approve' } })));
      expect(decided.map((d) => d.status)).toEqual(requests.map(() => 200));
      await waitUntil(() => waiting.filter((w) => events.ofRun(w.run_id).some((e) => e.event_type === 'done')).length >= 5, 30_000);
      await system.workers[0]!.kill();

      for (const w of waiting) {
        const done = await events.done(w.run_id, 90_000);
        expect(done.cancelled).toBe(false);
        const run = events.ofRun(w.run_id);
        assertWellFormedRun(run);
        const lost = run.filter((e) => e.event_type === 'error');
        // A run the kill caught mid-continuation says so once, and continues from its last recorded step.
        expect(lost.map((e) => e.error_code)).toEqual(lost.length ? ['worker_lost'] : []);
        if (lost.length === 0) {
          // Asked once, answered once: the continuation of a parked run repeats none of what the client had.
          expect(kinds(run).filter((k) => k !== 'file_operation').slice(0, 6)).toEqual(['run_queued', 'run_started', 'usage', 'tool_call', 'hitl_request', 'tool_result']);
        }
        const view = continuedView(run);
        expect(view.filter((e) => e.event_type === 'tool_call')).toHaveLength(1);
        expect(view.filter((e) => e.event_type === 'tool_result')).toEqual([expect.objectContaining({ status: expect.stringMatching(/^(success|interrupted)$/) })]);
        expect((await store.runs.get(w.run_id))?.status).toBe('completed');
      }
      expect(waiting.filter((_, i) => existsSync(fileOf(`files/parked-${i}.txt`))).length).toBe(50);
    } finally {
      alice.disconnect();
      bob.disconnect();
      await store.close();
    }
  });

  it('a cancel ends a parked run at once, its open call cancelled, with no worker involved', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: write('files/cancelled.txt') });
      const request = await events.next(runEvent(ack.run_id, 'hitl_request'));
      await waitUntil(async () => (await queue.jobState(ack.run_id)) === 'delayed', 20_000);
      const answer = await api(system.url, 'POST', `/chat/${ack.session_id}/cancel`, { apiKey: TEST_API_KEY });
      expect(answer.body).toMatchObject({ cancelled: true, run_ids: [ack.run_id] });
      const done = await events.done(ack.run_id);
      expect(done).toMatchObject({ cancelled: true, reason: 'cancelled' });
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      expect(kinds(run)).toEqual(['run_queued', 'run_started', 'usage', 'tool_call', 'hitl_request', 'tool_result', 'done']);
      expect(run.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'cancelled', tool_call_id: run.find((e) => e.event_type === 'tool_call')!.tool_call_id });
      // The question is closed; the job is gone; nothing is written.
      const late = await api(system.url, 'POST', `/hitl/${encodeURIComponent(request.request_id)}`, { apiKey: TEST_API_KEY, body: { decision: 'approve' } });
      expect(late.status).toBe(409);
      expect(late.body.details.status).toBe('cancelled');
      expect(await queue.jobState(ack.run_id)).toBe('unknown');
      // Proof that a continuation would have written by now: the worker takes jobs in order, and
      // the session's next run, queued after, is taken, asked, approved, writes its file and is done.
      const next = await sendChat(socket, { session_id: ack.session_id, message: write('files/after-cancel.txt') });
      const asked = await events.next(runEvent(next.run_id, 'hitl_request'));
      expect((await api(system.url, 'POST', `/hitl/${encodeURIComponent(asked.request_id)}`, { apiKey: TEST_API_KEY, body: { decision: 'approve' } })).status).toBe(200);
      expect((await events.done(next.run_id)).cancelled).toBe(false);
      expect(existsSync(fileOf('files/after-cancel.txt'))).toBe(true);
      expect(existsSync(fileOf('files/cancelled.txt'))).toBe(false);
    } finally {
      socket.disconnect();
    }
  });
});

describe('a parked run’s expiry', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_HITL_TIMEOUT: '3' } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('ends it timeout though no worker held it while it waited', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    const redis = new Redis(process.env.DATAAGENT_REDIS_URL!, { maxRetriesPerRequest: null });
    const queue = new RunQueue(redis, system.env.DATAAGENT_QUEUE_NAME!);
    try {
      const ack = await sendChat(socket, { message: write('files/expired.txt') });
      const request = await events.next(runEvent(ack.run_id, 'hitl_request'));
      await waitUntil(async () => (await queue.jobState(ack.run_id)) === 'delayed', 20_000);
      // No worker at all while it waits: the expiry is a sweep of the parked runs' deadlines that gateways run too, not a timer in some worker.
      await system.workers[0]!.stop();
      const done = await events.done(ack.run_id, 30_000);
      expect(done).toMatchObject({ cancelled: true, reason: 'timeout' });
      expect(Date.parse(done.timestamp)).toBeGreaterThanOrEqual(Date.parse(request.expires_at ?? ''));
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      expect(kinds(run)).toEqual(['run_queued', 'run_started', 'usage', 'tool_call', 'hitl_request', 'tool_result', 'done']);
      expect(run.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'timeout' });
      const late = await api(system.url, 'POST', `/hitl/${encodeURIComponent(request.request_id)}`, { apiKey: TEST_API_KEY, body: { decision: 'approve' } });
      expect({ status: late.status, code: late.body.error_code }).toEqual({ status: 409, code: 'timeout' });
      expect(late.body.details.status).toBe('timeout');
      // A worker that comes back finds nothing left of it to run.
      await system.addWorker();
      expect(await queue.jobState(ack.run_id)).toBe('unknown');
      expect(existsSync(join(system.dataDir, 'workspaces', 'acme', 'alice', 'files/expired.txt'))).toBe(false);
    } finally {
      socket.disconnect();
      await queue.close();
      redis.disconnect();
    }
  });
});
