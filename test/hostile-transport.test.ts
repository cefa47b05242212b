import WebSocket from 'ws';
import { io } from 'socket.io-client';
import { api } from './support/chat-clients.js';
import { chatToDone } from './support/event-waits.js';
import { clientFrame, closedByServer, rawRequest, rawUpgrade, runSubscribers } from './support/raw-http.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

async function expectAlive(system: TestSystem): Promise<void> {
  expect(system.gateway.proc.exitCode).toBeNull();
  expect(system.gateway.proc.signalCode).toBeNull();
  expect((await api(system.url, 'GET', '/health')).status).toBe(200);
}

describe('hostile sockets cost one closed socket and nothing more', () => {
  let system: TestSystem;
  let sessionId: string;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1 });
    sessionId = (await api(system.url, 'POST', '/sessions', { apiKey: TEST_API_KEY, body: {} })).body.session_id;
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('answers an upgrade without a key with 401 before any frame is read, and survives the frame', async () => {
    const { socket, status, head } = await rawUpgrade(system.url, '/ws/chat/x');
    expect(status).toBe(401);
    expect(head).not.toMatch(/101 Switching/);
    socket.write(Buffer.from('810568656c6c6f', 'hex')); // one unmasked text frame: "hello"
    await closedByServer(socket);
    await expectAlive(system);
  });

  it('answers an upgrade for an unknown session or path with 404', async () => {
    expect((await rawUpgrade(system.url, '/ws/chat/nope', { 'x-api-key': TEST_API_KEY })).status).toBe(404);
    expect((await rawUpgrade(system.url, `/ws/chat/${sessionId}/../x`, { 'x-api-key': TEST_API_KEY })).status).toBe(404);
    await expectAlive(system);
  });

  const badFrames: Array<[string, Buffer]> = [
    ['an unmasked frame', clientFrame(0x1, 'hello', { mask: false })],
    ['a reserved opcode', clientFrame(0x3, 'x')],
    ['RSV bits without an extension', clientFrame(0x1, 'x', { rsv: 0b100 })],
    ['a control frame over 125 bytes', clientFrame(0x9, Buffer.alloc(126))],
    ['a fragmented control frame', clientFrame(0x9, 'x', { fin: false })],
    ['a new message inside an unfinished one', Buffer.concat([clientFrame(0x1, 'a', { fin: false }), clientFrame(0x1, 'b')])],
    ['a continuation with nothing to continue', clientFrame(0x0, 'x')],
    ['a declared 2^63-byte frame', Buffer.from('81ff7fffffffffffffff12345678', 'hex')],
    ['a frame over the payload limit', Buffer.from('81ff0000000001000000' + '12345678', 'hex')],
    ['invalid UTF-8 in a text frame', clientFrame(0x1, Buffer.from([0xc3, 0x28]))],
  ];
  it.each(badFrames)('closes the socket on %s and keeps serving', async (_name, frame) => {
    const { socket, status } = await rawUpgrade(system.url, `/ws/chat/${sessionId}`, { 'x-api-key': TEST_API_KEY });
    expect(status).toBe(101);
    socket.write(frame);
    await closedByServer(socket);
    await expectAlive(system);
  });

  it('closes a socket that floods tiny frames, and others keep chatting', async () => {
    const { socket, status } = await rawUpgrade(system.url, `/ws/chat/${sessionId}`, { 'x-api-key': TEST_API_KEY });
    expect(status).toBe(101);
    const ping = clientFrame(0x1, '{"type":"ping"}');
    const pingFrame = clientFrame(0x9, '');
    socket.write(Buffer.concat(Array.from({ length: 5_000 }, (_, i) => (i % 2 ? ping : pingFrame))));
    const received = await closedByServer(socket);
    // The close frame carries 1008 and the reason.
    expect(received.toString('latin1')).toContain('too_many_messages');
    await expectAlive(system);
    const events = await chatToDone(system.url, TEST_API_KEY, 'still here');
    expect(events.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
  });

  it('refuses an absurd resume position with 4xx and leaves no subscription behind', async () => {
    const [first] = await chatToDone(system.url, TEST_API_KEY, 'a run to resume');
    const { run_id: runId } = first;
    for (const query of ['99999999999999999999', '4294967296', '1e3', '-1', '0x10']) {
      const res = await api(system.url, 'GET', `/runs/${runId}/events?after_seq=${query}`, { apiKey: TEST_API_KEY });
      expect({ query, status: res.status, code: res.body.error_code }).toEqual({ query, status: 422, code: 'validation_failed' });
    }
    const lastEventId = await rawRequest(system.url, 'GET', `/api/v1/runs/${runId}/events`, { 'x-api-key': TEST_API_KEY, 'last-event-id': `${runId}:99999999999999999999` });
    expect(lastEventId.status).toBe(400);
    expect(await runSubscribers(runId)).toBe(0);
    await expectAlive(system);
  });

  it('releases the event subscription of POST /chat/stream when its client goes away', async () => {
    const controller = new AbortController();
    const res = await fetch(`${system.url}/api/v1/chat/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_API_KEY },
      body: JSON.stringify({ message: '[[chunks:400]] [[slow:25]]' }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('event: text')) text += new TextDecoder().decode((await reader.read()).value);
    const session = /"session_id":"([^"]+)"/.exec(text)![1];
    const runId = /"run_id":"([^"]+)"/.exec(text)![1];
    expect(await runSubscribers(runId)).toBe(1);
    controller.abort();
    // The run streams on for seconds; its subscription must go with the client, not with the run.
    const deadline = Date.now() + 5_000;
    let count = 1;
    while (Date.now() < deadline && (count = await runSubscribers(runId)) > 0) await new Promise((r) => setTimeout(r, 50));
    expect(count).toBe(0);
    await api(system.url, 'POST', `/chat/${session}/cancel`, { apiKey: TEST_API_KEY });
  });
});

describe('with auth off, only loopback hosts and origins are served', () => {
  let system: TestSystem;

  beforeAll(async () => {
    // Only the gateway's answers are looked at here: no run, so no worker.
    system = await TestSystem.start({ workers: 0, env: { DATAAGENT_AUTH_DISABLED: 'true', DATAAGENT_API_KEYS: '' } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('refuses a foreign or rebound Host name', async () => {
    for (const host of ['evil.example', 'evil.example:8000', 'localhost.evil.example', '127.0.0.1.nip.io']) {
      const res = await rawRequest(system.url, 'GET', '/api/v1/sessions', { host });
      expect({ host, status: res.status, code: JSON.parse(res.body).error_code }).toEqual({ host, status: 403, code: 'host_not_allowed' });
    }
    for (const host of ['localhost', '127.0.0.1:8000', '[::1]:8000']) {
      expect((await rawRequest(system.url, 'GET', '/api/v1/sessions', { host })).status).toBe(200);
    }
  });

  it('refuses a foreign origin: no CORS grant and no answer', async () => {
    const preflight = await rawRequest(system.url, 'OPTIONS', '/api/v1/chat', {
      host: '127.0.0.1',
      origin: 'http://evil.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    const read = await rawRequest(system.url, 'GET', '/api/v1/sessions', { host: '127.0.0.1', origin: 'http://evil.example' });
    expect(read.status).toBe(403);
    expect(JSON.parse(read.body).error_code).toBe('origin_not_allowed');
    const post = await rawRequest(system.url, 'POST', '/api/v1/hitl/any', { host: '127.0.0.1', origin: 'null', 'content-type': 'text/plain' }, '{"decision":"approve"}');
    expect(post.status).toBe(403);
  });

  it('grants a loopback origin, without credentials', async () => {
    const res = await rawRequest(system.url, 'GET', '/api/v1/sessions', { host: '127.0.0.1:8000', origin: 'http://localhost:5173' });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('refuses Socket.IO and WebSocket handshakes from a foreign origin', async () => {
    const socket = io(`${system.url}/chat`, { transports: ['websocket'], extraHeaders: { origin: 'http://evil.example' }, reconnection: false, forceNew: true });
    const outcome = await new Promise<string>((resolve) => {
      socket.once('connect', () => resolve('connected'));
      socket.once('connect_error', () => resolve('refused'));
    });
    socket.disconnect();
    expect(outcome).toBe('refused');
    const { body } = await api(system.url, 'POST', '/sessions', { body: {} });
    expect((await rawUpgrade(system.url, `/ws/chat/${body.session_id}`, { origin: 'http://evil.example' })).status).toBe(403);
    const ok = new WebSocket(`${system.url.replace('http', 'ws')}/ws/chat/${body.session_id}`, { headers: { origin: 'http://127.0.0.1:3000' } });
    await new Promise((resolve, reject) => ok.once('open', resolve).once('error', reject));
    ok.close();
  });
});

describe('with auth on, CORS follows DATAAGENT_CORS_ORIGINS exactly', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 0, env: { DATAAGENT_CORS_ORIGINS: 'https://app.example.com' } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('grants the listed origin and nothing else', async () => {
    const headers = { host: '127.0.0.1', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-api-key' };
    const listed = await rawRequest(system.url, 'OPTIONS', '/api/v1/chat', { ...headers, origin: 'https://app.example.com' });
    expect(listed.headers['access-control-allow-origin']).toBe('https://app.example.com');
    const other = await rawRequest(system.url, 'OPTIONS', '/api/v1/chat', { ...headers, origin: 'https://evil.example' });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const read = await rawRequest(system.url, 'GET', '/api/v1/sessions', { host: '127.0.0.1', origin: 'https://evil.example', 'x-api-key': TEST_API_KEY });
    expect(read.status).toBe(403);
    // Any Host is fine with auth on: a key is needed anyway.
    expect((await rawRequest(system.url, 'GET', '/api/v1/sessions', { host: 'dataagent.internal', 'x-api-key': TEST_API_KEY })).status).toBe(200);
  });
});
