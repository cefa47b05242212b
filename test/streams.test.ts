import { request as httpRequest } from 'node:http';
import { connect as tcpConnect } from 'node:net';
import WebSocket from 'ws';
import type { EventDict } from '#core/events/execution-event.js';
import { createRedis, type RedisClient } from '#transport/redis-connection.js';
import { redisKeys } from '#transport/redis-keys.js';
import { api, assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat, sendMessage, waitUntil } from './support/event-waits.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

const TODO_CALL = '[[tool:write_todos {"todos":[{"content":"plan","status":"in_progress"}]}]]';

describe('resumable streams, plain WebSocket and SSE', () => {
  let system: TestSystem;

  let redis: RedisClient;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 2, env: { DATAAGENT_WS_HEARTBEAT: '0.3', DATAAGENT_RUN_LOG_TTL: '2' } });
    redis = createRedis(process.env.DATAAGENT_REDIS_URL!, 'streams-test');
  });
  afterAll(async () => {
    await redis?.quit();
    await system?.stop();
  });

  /** The full log of a finished run, replayed from the start. */
  async function fullLog(runId: string, sessionId: string): Promise<EventDict[]> {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      await sendMessage(socket, 'resume', { session_id: sessionId, run_id: runId, after_seq: 0 });
      await events.done(runId);
      return events.ofRun(runId);
    } finally {
      socket.disconnect();
    }
  }

  it.each([1, 5, 20])('resumes after a disconnect at event %i with no gap and no duplicate', async (cut) => {
    const first = await connectChat(system.url, TEST_API_KEY);
    const before = new EventCollector(first);
    const ack = await sendChat(first, { message: '[[chunks:40]] [[slow:15]]' });
    await before.next((e) => e.run_id === ack.run_id && e.seq >= cut);
    first.disconnect();
    const got = before.ofRun(ack.run_id);
    const afterSeq = got.at(-1)!.seq;

    const second = await connectChat(system.url, TEST_API_KEY);
    const after = new EventCollector(second);
    try {
      const answer = await sendMessage(second, 'resume', { session_id: ack.session_id, run_id: ack.run_id, after_seq: afterSeq });
      expect(answer).toMatchObject({ ok: true, run_id: ack.run_id });
      await after.done(ack.run_id);
      const joined = [...got, ...after.ofRun(ack.run_id)];
      assertWellFormedRun(joined);
      expect(joined).toEqual(await fullLog(ack.run_id, ack.session_id));
    } finally {
      second.disconnect();
    }
  });

  it('resumes on a restarted gateway', async () => {
    const first = await connectChat(system.url, TEST_API_KEY);
    const before = new EventCollector(first);
    const ack = await sendChat(first, { message: '[[chunks:60]] [[slow:40]]' });
    await before.next((e) => e.run_id === ack.run_id && e.event_type === 'text');
    await system.restartGateway();
    first.disconnect();
    const got = before.ofRun(ack.run_id);
    const second = await connectChat(system.url, TEST_API_KEY);
    const after = new EventCollector(second);
    try {
      // By run id: the run may have ended while the gateway restarted, and is replayed then.
      await sendMessage(second, 'resume', { run_id: ack.run_id, after_seq: got.at(-1)!.seq });
      await after.done(ack.run_id);
      const joined = [...got, ...after.ofRun(ack.run_id)];
      assertWellFormedRun(joined);
      expect(joined.filter((e) => e.event_type === 'text' && !e.is_final)).toHaveLength(60);
    } finally {
      second.disconnect();
    }
  });

  it('replays from MySQL once Redis no longer holds the log', async () => {
    const { body } = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { message: '[[chunks:5]]' } });
    // DATAAGENT_RUN_LOG_TTL=2: the run's seq, log and done expire two seconds after its done.
    const keys = [redisKeys.runSeq(body.run_id), redisKeys.runLog(body.run_id), redisKeys.runDone(body.run_id)];
    expect(await redis.exists(...keys)).toBe(keys.length);
    await waitUntil(async () => (await redis.exists(...keys)) === 0);
    const replayed = await fullLog(body.run_id, body.session_id);
    expect(replayed).toEqual(body.events);
  });

  it('refuses to resume another user’s run', async () => {
    const { body } = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { message: 'mine' } });
    const socket = await connectChat(system.url, OTHER_API_KEY);
    try {
      const answer = await sendMessage(socket, 'resume', { run_id: body.run_id, after_seq: 0 });
      expect(answer).toMatchObject({ ok: false, error_code: 'run_not_found' });
    } finally {
      socket.disconnect();
    }
  });

  it('completes a chat with a tool call over plain WebSocket', async () => {
    const session = await api(system.url, 'POST', '/sessions', { apiKey: TEST_API_KEY, body: {} });
    const ws = new WebSocket(`${system.url.replace('http', 'ws')}/ws/chat/${session.body.session_id}`, { headers: { 'x-api-key': TEST_API_KEY } });
    const received: Record<string, any>[] = [];
    const done = new Promise<void>((resolve, reject) => {
      ws.on('message', (data) => {
        const msg = JSON.parse(data.toString());
        received.push(msg);
        if (msg.event_type === 'done') resolve();
      });
      ws.on('close', (code) => reject(new Error(`closed ${code}`)));
    });
    await new Promise((r) => ws.once('open', r));
    ws.send('not json');
    ws.send(JSON.stringify({ type: 'chat', payload: { message: `todo ${TODO_CALL}` } }));
    await done;
    ws.close();
    const events = received.filter((m) => m.event_type && m.run_id) as EventDict[];
    assertWellFormedRun(events);
    expect(events.map((e) => e.event_type)).toEqual(expect.arrayContaining(['tool_call', 'todo_update', 'tool_result']));
    expect(events.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'success' });
    expect(received.some((m) => m.event_type === 'error' && m.error_code === 'invalid_json')).toBe(true);
    expect(received.some((m) => m.type === 'ack' && m.ok === true && m.run_id === events[0].run_id)).toBe(true);
  });

  it('refuses WebSockets for unknown or foreign sessions and bad keys on the HTTP upgrade', async () => {
    const { body } = await api(system.url, 'POST', '/sessions', { apiKey: TEST_API_KEY, body: {} });
    const base = system.url.replace('http', 'ws');
    const refusal = (url: string, headers: Record<string, string> = {}) =>
      new Promise<[number, string]>((resolve, reject) => {
        const ws = new WebSocket(url, { headers });
        ws.on('open', () => reject(new Error('upgraded')));
        ws.on('error', () => undefined);
        ws.on('unexpected-response', (_req, res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk));
          res.on('end', () => resolve([res.statusCode ?? 0, JSON.parse(text).error_code]));
        });
      });
    expect(await refusal(`${base}/ws/chat/nope?api_key=${TEST_API_KEY}`)).toEqual([404, 'session_not_found']);
    expect(await refusal(`${base}/ws/chat/${body.session_id}`, { 'x-api-key': OTHER_API_KEY })).toEqual([404, 'session_not_found']);
    expect(await refusal(`${base}/ws/chat/${body.session_id}`, { 'x-api-key': 'wrong' })).toEqual([401, 'invalid_api_key']);
    expect(await refusal(`${base}/ws/chat/${body.session_id}`)).toEqual([401, 'missing_api_key']);
    expect(await refusal(`${base}/ws/other?api_key=${TEST_API_KEY}`)).toEqual([404, 'not_found']);
  });

  it('closes a WebSocket whose client stops answering heartbeats', async () => {
    const { body } = await api(system.url, 'POST', '/sessions', { apiKey: TEST_API_KEY, body: {} });
    const port = new URL(system.url).port;
    // A raw client that completes the upgrade and then never answers a ping.
    const socket = tcpConnect(Number(port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(
      `GET /ws/chat/${body.session_id} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nX-API-Key: ${TEST_API_KEY}\r\n\r\n`,
    );
    const chunks: Buffer[] = [];
    socket.on('data', (d) => chunks.push(d));
    await new Promise((r) => socket.once('close', r));
    const raw = Buffer.concat(chunks);
    expect(raw.toString('latin1')).toContain('101 Switching Protocols');
    // The close frame carries 4408 (0x11 0x38).
    expect(raw.includes(Buffer.from([0x88, 0x02 + 0, 0x11, 0x38])) || raw.includes(Buffer.from([0x11, 0x38]))).toBe(true);
  });

  it('streams a chat with a tool call over SSE and resumes from Last-Event-ID', async () => {
    const res = await fetch(`${system.url}/api/v1/chat/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_API_KEY },
      body: JSON.stringify({ message: `todo ${TODO_CALL}` }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const frames = parseSse(await res.text());
    const events = frames.map((f) => JSON.parse(f.data) as EventDict);
    assertWellFormedRun(events);
    expect(frames.every((f, i) => f.id === `${events[i].run_id}:${events[i].seq}` && f.event === events[i].event_type)).toBe(true);
    expect(events.map((e) => e.event_type)).toEqual(expect.arrayContaining(['tool_call', 'tool_result']));

    const runId = events[0].run_id;
    const resumed = await sseGet(`${system.url}/api/v1/runs/${runId}/events`, { 'x-api-key': TEST_API_KEY, 'last-event-id': frames[2].id });
    expect(resumed.map((f) => JSON.parse(f.data))).toEqual(events.slice(3));
    const foreign = await fetch(`${system.url}/api/v1/runs/${runId}/events`, { headers: { 'x-api-key': OTHER_API_KEY } });
    expect(foreign.status).toBe(404);
    // A client that already has the done gets 204 No Content: nothing more will come.
    const last = frames.at(-1)!.id;
    const after = await fetch(`${system.url}/api/v1/runs/${runId}/events`, { headers: { 'x-api-key': TEST_API_KEY, 'last-event-id': last } });
    expect({ status: after.status, body: await after.text() }).toEqual({ status: 204, body: '' });
    expect((await fetch(`${system.url}/api/v1/runs/${runId}/events?after_seq=${events.length + 50}`, { headers: { 'x-api-key': TEST_API_KEY } })).status).toBe(204);
  });
});

function parseSse(text: string): Array<{ id: string; event: string; data: string }> {
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const frame = { id: '', event: '', data: '' };
      for (const line of block.split('\n')) {
        const i = line.indexOf(': ');
        const field = line.slice(0, i) as keyof typeof frame;
        if (field in frame) frame[field] = line.slice(i + 2);
      }
      return frame;
    });
}

function sseGet(url: string, headers: Record<string, string>): Promise<Array<{ id: string; event: string; data: string }>> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve(parseSse(text)));
    })
      .on('error', reject)
      .end();
  });
}
