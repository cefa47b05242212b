import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error plain JS module shared with `npm start`
import { startRedis } from '../scripts/local-services.mjs';
import type { AppProcess } from './support/app-processes.js';
import { api } from './support/chat-clients.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

interface RedisHandle {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** The worker's probe server, from the line it prints at startup (DATAAGENT_HEALTH_PORT=0 picks the port). */
function probesOf(worker: AppProcess): string {
  const line = worker.output.map((l) => (l.startsWith('{') ? (JSON.parse(l) as { msg?: string; port?: number }) : null)).find((j) => j?.msg === 'worker health listening');
  if (!line) throw new Error(`the worker printed no health port:\n${worker.output.join('\n')}`);
  return `http://127.0.0.1:${line.port}`;
}

async function probe(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Asks until `url` answers `status`, every 100 ms; fails after `timeoutMs`. */
async function untilStatus(url: string, status: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await probe(url).catch(() => ({ status: 0 }))).status !== status) {
    if (Date.now() > deadline) throw new Error(`${url} did not answer ${status} in time`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Liveness and readiness (issue 13): a process that lost a dependency or is draining is not
 * ready (no new traffic, no rollout progress) but still live (not restarted).
 */
describe('liveness and readiness probes', () => {
  let system: TestSystem;
  let redis: RedisHandle;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-probes-'));
    redis = await startRedis({ dir, persist: false });
    // The first test's worker starts with the gateway.
    system = await TestSystem.start({ workers: [{ DATAAGENT_HEALTH_PORT: '0', DATAAGENT_DRAIN_SECONDS: '120' }], env: { DATAAGENT_REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await system?.stop();
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a draining worker answers not ready while it is still live, until it exits', async () => {
    const worker = system.workers[0]!;
    const probes = probesOf(worker);
    expect(await probe(`${probes}/health/ready`)).toEqual({ status: 200, body: { status: 'ready' } });
    expect(await probe(`${probes}/health/live`)).toEqual({ status: 200, body: { status: 'ok' } });

    // A run that streams one chunk and then hangs: the drain waits for it.
    const chat = await fetch(`${system.url}/api/v1/chat/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_API_KEY },
      body: JSON.stringify({ message: '[[chunks:1]] [[hang]]' }),
    });
    const reader = chat.body!.getReader();
    let seen = '';
    while (!seen.includes('event: text')) seen += new TextDecoder().decode((await reader.read()).value);
    const sessionId = /"session_id":"([^"]+)"/.exec(seen)![1];

    worker.proc.kill('SIGTERM');
    await untilStatus(`${probes}/health/ready`, 503);
    expect(await probe(`${probes}/health/ready`)).toEqual({ status: 503, body: { status: 'not_ready' } });
    expect(await probe(`${probes}/health/live`)).toEqual({ status: 200, body: { status: 'ok' } });
    expect(worker.proc.exitCode).toBeNull();

    // Its last run ends: the drain is over and the worker exits by itself (a second SIGTERM would kill it outright).
    const exited = once(worker.proc, 'exit', { signal: AbortSignal.timeout(30_000) });
    expect((await api(system.url, 'POST', `/chat/${sessionId}/cancel`, { apiKey: TEST_API_KEY })).body).toMatchObject({ cancelled: true });
    expect(await exited).toEqual([null, 'SIGTERM']);
    await reader.cancel();
  });

  it('the gateway and a worker are live but not ready while Redis is down, and ready again after', async () => {
    const worker = await system.addWorker({ DATAAGENT_HEALTH_PORT: '0' });
    const probes = probesOf(worker);
    const gateway = `${system.url}/api/v1/health`;
    // No API key: the kubelet has none.
    expect(await probe(`${gateway}/live`)).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await probe(`${gateway}/ready`)).toEqual({ status: 200, body: { status: 'ready', redis: 'up', database: 'up' } });

    await redis.stop();
    expect(await probe(`${gateway}/ready`)).toEqual({ status: 503, body: { status: 'not_ready', redis: 'down', database: 'up' } });
    expect(await probe(`${gateway}/live`)).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await probe(`${probes}/health/ready`)).toEqual({ status: 503, body: { status: 'not_ready' } });
    expect(await probe(`${probes}/health/live`)).toEqual({ status: 200, body: { status: 'ok' } });

    redis = await startRedis({ dir, port: redis.port, persist: false });
    await untilStatus(`${gateway}/ready`, 200);
    await untilStatus(`${probes}/health/ready`, 200);
  });
});
