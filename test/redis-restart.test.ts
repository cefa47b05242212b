import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error plain JS module shared with `npm start`
import { startRedis } from '../scripts/local-services.mjs';
import type { EventDict } from '#core/events/execution-event.js';
import { api, assertWellFormedRun, chatOverSocket, connectChat, continuedView } from './support/chat-clients.js';
import { EventCollector, sendChat, sendMessage, waitUntil } from './support/event-waits.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

interface RedisHandle {
  url: string;
  port: number;
  stop(): Promise<void>;
}

describe('a Redis restart', () => {
  let system: TestSystem;
  let redis: RedisHandle;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-redis-'));
    redis = await startRedis({ dir, persist: true });
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await system?.stop();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loses no history, reports itself degraded while Redis is down, and serves chats again after', async () => {
    const before = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { message: 'before the outage' } });
    expect(before.status).toBe(200);

    await redis.stop();
    const down = await api(system.url, 'GET', '/health');
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ status: 'degraded', redis: 'down', database: 'up' });
    // New chats are refused at once with a status to retry on, not left hanging.
    for (const body of [{ message: 'during the outage' }, { message: 'during the outage', session_id: before.body.session_id }]) {
      const refused = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body, signal: AbortSignal.timeout(15_000) });
      expect({ status: refused.status, code: refused.body.error_code, retry: refused.headers.get('retry-after') }).toEqual({ status: 503, code: 'redis_unavailable', retry: '5' });
    }
    const socket = await connectChat(system.url, TEST_API_KEY);
    try {
      const [refused] = await chatOverSocket(socket, { message: 'during the outage' }, 15_000);
      expect(refused).toMatchObject({ event_type: 'error', error_code: 'redis_unavailable', details: { status: 503 } });
    } finally {
      socket.disconnect();
    }
    expect(system.gateway.proc.exitCode).toBeNull();
    expect(system.workers[0].proc.exitCode).toBeNull();

    redis = await startRedis({ dir, port: redis.port, persist: true });
    await waitForHealthy(system.url);

    const after = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { message: 'after the outage', session_id: before.body.session_id } });
    expect(after.status).toBe(200);
    assertWellFormedRun(after.body.events);
    expect(after.body.events.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
    const messages = await api(system.url, 'GET', `/sessions/${before.body.session_id}/messages`, { apiKey: TEST_API_KEY });
    expect(messages.body.messages.map((m: { content: string }) => m.content).filter((_: string, i: number) => i % 2 === 0)).toEqual(['before the outage', 'after the outage']);
  });

  it('runs streaming through an outage longer than the workers\' command timeout each end once, answer whole', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    const runs: Array<{ session_id: string; run_id: string }> = [];
    try {
      for (let i = 0; i < 10; i++) runs.push(await sendChat(socket, { message: '[[chunks:30]] [[slow:100]]' }));
      await waitUntil(() => runs.every((r) => events.ofRun(r.run_id).some((e) => e.event_type === 'text')), 20_000);
      await redis.stop();
      // Down until the worker's Redis commands have timed out: its runs' writes fail and it hands each one back.
      const handedBack = () => new Set(system.workers[0].output.filter((line) => line.includes('"why":"redis_unavailable"')).map((line) => JSON.parse(line).run_id));
      await waitUntil(() => runs.every((r) => handedBack().has(r.run_id)), 30_000);
      expect([system.gateway.proc.exitCode, system.workers[0].proc.exitCode]).toEqual([null, null]);
      redis = await startRedis({ dir, port: redis.port, persist: true });
      await waitForHealthy(system.url);
    } finally {
      socket.disconnect();
    }
    let continued = 0;
    for (const run of runs) {
      const log = await fullLog(run.session_id, run.run_id);
      assertWellFormedRun(log);
      const lost = log.filter((e) => e.event_type === 'error');
      expect(lost.every((e) => e.error_code === 'worker_lost')).toBe(true);
      continued += lost.length;
      expect(log.at(-1)).toMatchObject({ cancelled: false });
      const shown = continuedView(log).filter((e) => e.event_type === 'text').map((e) => e.content).join('');
      expect(shown.split(' ').filter(Boolean)).toHaveLength(30);
      const messages = await api(system.url, 'GET', `/sessions/${run.session_id}/messages`, { apiKey: TEST_API_KEY });
      expect(messages.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
      expect(messages.body.messages[1].content).toBe(shown);
    }
    // The runs went through the outage by being handed back and continued, not by luck of timing.
    expect(continued).toBeGreaterThan(0);
    expect([system.gateway.proc.exitCode, system.workers[0].proc.exitCode]).toEqual([null, null]);

    async function fullLog(sessionId: string, runId: string): Promise<EventDict[]> {
      const reader = await connectChat(system.url, TEST_API_KEY);
      const replay = new EventCollector(reader);
      try {
        await sendMessage(reader, 'resume', { session_id: sessionId, run_id: runId, after_seq: 0 });
        await replay.done(runId, 60_000);
        return replay.ofRun(runId);
      } finally {
        reader.disconnect();
      }
    }
  });
});

async function waitForHealthy(url: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api(url, 'GET', '/health').catch(() => null);
    if (res?.status === 200) return;
    if (Date.now() > deadline) throw new Error('gateway not healthy again in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
