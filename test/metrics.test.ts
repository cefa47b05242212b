import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import type { EventDict } from '#core/events/execution-event.js';
import { startGateway } from './support/app-processes.js';
import { api, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat } from './support/event-waits.js';
import { FAULT_SERVER, killRecordedServers } from './support/mcp-fault-servers.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text exposition, samples only (BullMQ writes `, ` between labels: allowed). */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

async function scrape(url: string, headers: Record<string, string> = {}): Promise<Sample[]> {
  const res = await fetch(url, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return parseMetrics(await res.text());
}

/** Scrapes until `settled` holds for what it reads (at most 5 s), and returns the last scrape. */
async function scrapeUntil(url: string, settled: (samples: Sample[]) => boolean): Promise<Sample[]> {
  let samples = await scrape(url);
  for (let tries = 0; tries < 50 && !settled(samples); tries++) {
    await new Promise((r) => setTimeout(r, 100));
    samples = await scrape(url);
  }
  return samples;
}

/** The value of the one sample of `name` whose labels include `labels`; undefined when there is none. */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found.length === 0 ? undefined : found.reduce((sum, s) => sum + s.value, 0);
}

/** A chat streamed over SSE, its events collected as they come. */
class SseChat {
  readonly events: EventDict[] = [];
  readonly ended: Promise<unknown>;
  private buffer = '';
  private readonly waiters = new Set<() => void>();

  private constructor(private readonly res: IncomingMessage) {
    res.setEncoding('utf8');
    res.on('data', (text: string) => {
      this.buffer += text;
      let end: number;
      while ((end = this.buffer.indexOf('\n\n')) >= 0) {
        const data = this.buffer.slice(0, end).split('\n').find((l) => l.startsWith('data: '));
        this.buffer = this.buffer.slice(end + 2);
        if (data) this.events.push(JSON.parse(data.slice(6)) as EventDict);
      }
      for (const wake of this.waiters) wake();
    });
    this.ended = once(res, 'end');
  }

  static open(baseUrl: string, message: string): Promise<SseChat> {
    return new Promise((resolve, reject) => {
      httpRequest(`${baseUrl}/api/v1/chat/stream`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_API_KEY } }, (res) => resolve(new SseChat(res)))
        .on('error', reject)
        .end(JSON.stringify({ message }));
    });
  }

  async next(type: string, timeoutMs = 30_000): Promise<EventDict> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find((e) => e.event_type === type);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no ${type} over SSE in ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const wake = () => (this.waiters.delete(wake), resolve());
        this.waiters.add(wake);
        setTimeout(wake, 200);
      });
    }
  }

  close(): void {
    this.res.destroy();
  }
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/**
 * `/metrics` on the gateway and on a worker's own port, scraped after real traffic: chats over
 * Socket.IO, SSE and plain WebSocket, a built-in tool call, an MCP call, and two cancels (one
 * queued, one running).
 */
describe('metrics', () => {
  let system: TestSystem;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-metrics-'));
    const file = join(dir, 'mcp.json');
    writeFileSync(file, JSON.stringify({ servers: [{ name: 'shop', command: process.execPath, args: [FAULT_SERVER, 'shop', '--record', join(dir, 'shop.jsonl')] }] }));
    // One slot: a second run waits in the queue while the first streams.
    // killRecordedServers reads the shop server's host pid, which a sandbox's own PID namespace would hide; test/sandbox-red-team.test.ts covers sandboxed servers.
    system = await TestSystem.start({ env: { DATAAGENT_SANDBOX: 'none', DATAAGENT_MCP_CONFIG: file, DATAAGENT_WORKER_CONCURRENCY: '1' } });
  });
  afterAll(async () => {
    await system?.stop();
    if (dir) {
      killRecordedServers(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exports every family with values that follow the traffic, and no label carries an id', async () => {
    const workerUrl = system.workers[0]!.metricsUrl!;
    expect(workerUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const ids = new Set<string>();
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    let duringGateway: Sample[];
    let duringWorker: Sample[];
    try {
      // Streamed text (10 ms apart) and a built-in tool call; then an MCP call.
      const todo = await sendChat(socket, { message: '[[chunks:4]] [[slow:10]] [[tool:write_todos {"todos":[{"content":"metrics","status":"pending"}]}]]' });
      await events.done(todo.run_id);
      const mcp = await sendChat(socket, { message: '[[tool:shop__get_order {"orderId":"T-1"}]]' });
      await events.done(mcp.run_id);

      // A long answer over SSE holds the worker's only slot; a plain WebSocket watches a session.
      const sse = await SseChat.open(system.url, '[[chunks:400]] [[slow:50]]');
      const started = await sse.next('text');
      const ws = new WebSocket(`${system.url.replace('http', 'ws')}/ws/chat/${todo.session_id}`, { headers: { 'x-api-key': TEST_API_KEY } });
      await once(ws, 'open');
      const queued = await sendChat(socket, { message: 'waits in line' });
      await events.next((e) => e.run_id === queued.run_id && e.event_type === 'run_queued');
      for (const id of [todo.session_id, todo.run_id, mcp.session_id, mcp.run_id, started.session_id, started.run_id, queued.session_id, queued.run_id]) ids.add(id);

      [duringGateway, duringWorker] = await Promise.all([scrape(`${system.url}/metrics`), scrape(workerUrl)]);
      for (const transport of ['socketio', 'ws', 'sse']) expect(value(duringGateway, 'dataagent_open_sockets', { transport })).toBeGreaterThanOrEqual(1);
      expect(value(duringWorker, 'dataagent_runs_active')).toBe(1);
      expect(value(duringGateway, 'bullmq_jobs', { state: 'waiting' })).toBeGreaterThanOrEqual(1);
      expect(value(duringGateway, 'bullmq_jobs', { state: 'active' })).toBe(1);

      // Cancel the queued run (the gateway ends it), then the streaming one (its worker does).
      expect((await api(system.url, 'POST', `/chat/${queued.session_id}/cancel`, { apiKey: TEST_API_KEY })).body).toMatchObject({ cancelled: true });
      await events.done(queued.run_id);
      expect((await api(system.url, 'POST', `/chat/${started.session_id}/cancel`, { apiKey: TEST_API_KEY })).body).toMatchObject({ cancelled: true });
      expect(await sse.next('done')).toMatchObject({ cancelled: true });
      await sse.ended;
      ws.close();
      await once(ws, 'close');
    } finally {
      socket.disconnect();
    }

    // The gateway hears of a disconnect a moment later, and a worker completes a run's job just after its done.
    const gateway = await scrapeUntil(`${system.url}/metrics`, (s) => ['socketio', 'ws', 'sse'].every((transport) => value(s, 'dataagent_open_sockets', { transport }) === 0) && value(s, 'bullmq_jobs', { state: 'active' }) === 0);
    for (const transport of ['socketio', 'ws', 'sse']) expect(value(gateway, 'dataagent_open_sockets', { transport })).toBe(0);
    const worker = await scrape(workerUrl);

    // Gateway: HTTP by route template, runs queued, queue depth (BullMQ), delivery, queued cancel, pool, event loop.
    const cancelRoute = { route: '/api/v1/chat/:sessionId/cancel', method: 'POST', status: '200' };
    expect(value(gateway, 'dataagent_http_requests_total', cancelRoute)).toBe(2);
    expect(value(gateway, 'dataagent_http_request_duration_seconds_count', cancelRoute)).toBe(2);
    expect(value(gateway, 'dataagent_http_requests_total', { route: '/api/v1/chat/stream', method: 'POST', status: '200' })).toBe(1);
    expect(value(gateway, 'dataagent_runs_queued_total')).toBe(4);
    expect(value(gateway, 'dataagent_runs_finished_total', { outcome: 'cancelled' })).toBe(1);
    expect(value(gateway, 'dataagent_cancel_latency_seconds_count', { stage: 'queued' })).toBe(1);
    expect(value(gateway, 'dataagent_event_delivery_seconds_count')).toBeGreaterThan(10);
    expect(value(gateway, 'bullmq_jobs', { state: 'completed' })).toBe(3);
    expect(value(gateway, 'bullmq_jobs', { state: 'waiting' })).toBe(0);
    expect(value(gateway, 'bullmq_job_completed_total')).toBe(3);
    expect(value(gateway, 'dataagent_pool_connections', { pool: 'mysql', state: 'open' })).toBeGreaterThanOrEqual(1);
    expect(value(gateway, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);

    // Worker: runs, queue wait, model calls, tool and MCP calls, running cancel, pools, event loop.
    expect(value(worker, 'dataagent_runs_active')).toBe(0);
    expect(value(worker, 'dataagent_runs_finished_total', { outcome: 'completed' })).toBe(2);
    expect(value(worker, 'dataagent_runs_finished_total', { outcome: 'cancelled' })).toBe(1);
    expect(value(worker, 'dataagent_run_start_delay_seconds_count')).toBe(3);
    expect(value(worker, 'dataagent_cancel_latency_seconds_count', { stage: 'running' })).toBe(1);
    // Two calls each for the tool chats (the call, then the answer to its result), one for the long answer.
    expect(value(worker, 'dataagent_llm_time_to_first_token_seconds_count')).toBe(5);
    expect(value(worker, 'dataagent_llm_calls_total', { status: 'cancelled' })).toBe(1);
    expect(value(worker, 'dataagent_llm_tokens_per_second_count')).toBeGreaterThanOrEqual(2);
    expect(value(worker, 'dataagent_llm_tokens_per_second_sum')).toBeGreaterThan(0);
    expect(value(worker, 'dataagent_tool_call_duration_seconds_count', { tool: 'write_todos', status: 'success' })).toBe(1);
    expect(value(worker, 'dataagent_tool_call_duration_seconds_count', { tool: 'shop.get_order', status: 'success' })).toBe(1);
    expect(value(worker, 'dataagent_mcp_call_duration_seconds_count', { server: 'shop', tool: 'shop.get_order', status: 'ok' })).toBe(1);
    expect(value(worker, 'dataagent_pool_connections', { pool: 'mcp', state: 'open' })).toBeGreaterThanOrEqual(1);
    expect(value(worker, 'dataagent_pool_connections', { pool: 'mysql', state: 'open' })).toBeGreaterThanOrEqual(1);
    expect(value(worker, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);

    // Bounded labels: no id, user or raw path in any label of either process.
    for (const sample of [...duringGateway!, ...duringWorker!, ...gateway, ...worker]) {
      for (const label of Object.values(sample.labels)) {
        expect(label).not.toMatch(UUID);
        expect(ids.has(label) || ['alice', 'bob', 'acme'].includes(label)).toBe(false);
      }
    }
  });

  it('asks for the bearer token when one is set, and serves nothing when metrics are off', async () => {
    const token = 'metrics-token-for-the-test';
    const [guarded, off, guardedWorker, offWorker] = await Promise.all([
      startGateway({ ...system.env, DATAAGENT_METRICS_TOKEN: token }),
      startGateway({ ...system.env, DATAAGENT_METRICS_ENABLED: 'false' }),
      system.addWorker({ DATAAGENT_METRICS_TOKEN: token }),
      system.addWorker({ DATAAGENT_METRICS_ENABLED: 'false' }),
    ]);
    try {
      for (const url of [`${guarded.url}/metrics`, guardedWorker.metricsUrl!]) {
        expect((await fetch(url)).status).toBe(401);
        expect((await fetch(url, { headers: { authorization: 'Bearer not-the-token-at-all' } })).status).toBe(401);
        expect(value(await scrape(url, { authorization: `Bearer ${token}` }), 'dataagent_runs_finished_total', { outcome: 'completed' })).toBeGreaterThanOrEqual(0);
      }
      expect((await fetch(`${off.url}/metrics`)).status).toBe(404);
      expect(offWorker.metricsUrl).toBeUndefined();
    } finally {
      await Promise.all([guarded.stop(), off.stop()]);
    }
  });
});
