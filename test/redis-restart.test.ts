import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error plain JS module shared with `npm start`
import { startRedis } from '../scripts/local-services.mjs';
import { api, assertWellFormedRun, chatOverSocket, connectChat } from './support/chat-clients.js';
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
