import { api, chatOverSocket, connectChat } from './support/chat-clients.js';
import { waitUntil } from './support/event-waits.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

describe('bad input gets a clear 4xx and nothing crashes', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1 });
  });
  afterAll(async () => {
    await system?.stop();
  });

  const post = (body: unknown, apiKey: string | null = TEST_API_KEY) => api(system.url, 'POST', '/chat', { apiKey: apiKey ?? undefined, body });

  it.each([
    ['invalid JSON', '{"message": "hi"', 400, 'invalid_json'],
    ['a missing message', {}, 422, 'validation_failed'],
    ['a message of the wrong type', { message: 42 }, 422, 'validation_failed'],
    ['a session id of the wrong type', { message: 'hi', session_id: ['x'] }, 422, 'validation_failed'],
    ['a 1 MB message', { message: 'x'.repeat(1024 * 1024) }, 413, 'payload_too_large'],
    ['a message over the message limit', { message: 'x'.repeat(70 * 1024) }, 413, 'message_too_large'],
    ['an unknown session id', { message: 'hi', session_id: 'no-such-session' }, 404, 'session_not_found'],
    ['an unknown assistant', { message: 'hi', assistant_id: 'nobody' }, 404, 'assistant_not_found'],
  ])('%s', async (_name, body, status, code) => {
    const res = await post(body);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ error_code: code });
    expect(typeof res.body.message).toBe('string');
    expect(res.body).toHaveProperty('details');
  });

  it('refuses a missing or wrong API key with 401 and never echoes the key', async () => {
    const missing = await post({ message: 'hi' }, null);
    expect(missing.status).toBe(401);
    expect(missing.body.error_code).toBe('missing_api_key');
    const wrong = await post({ message: 'hi' }, 'not-a-key-s3cr3t');
    expect(wrong.status).toBe(401);
    expect(wrong.body.error_code).toBe('invalid_api_key');
    expect(JSON.stringify(wrong.body)).not.toContain('s3cr3t');
    expect((await api(system.url, 'GET', '/sessions', { apiKey: 'nope' })).status).toBe(401);
  });

  it('refuses a socket handshake without a valid key', async () => {
    await expect(connectChat(system.url)).rejects.toMatchObject({ data: { error_code: 'missing_api_key' } });
    await expect(connectChat(system.url, 'wrong')).rejects.toMatchObject({ data: { error_code: 'invalid_api_key' } });
  });

  it('answers bad socket messages with error events and keeps the connection', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    try {
      const errors: Record<string, unknown>[] = [];
      socket.on('event', (e) => e.event_type === 'error' && errors.push(e));
      socket.emit('message', '{not json');
      socket.emit('message', { type: 'chat', payload: {} });
      socket.emit('message', { type: 'chat', payload: { message: 7 } });
      socket.emit('message', { type: 'dance' });
      socket.emit('message', { type: 'chat', payload: { message: 'x'.repeat(1024 * 1024) } });
      socket.emit('message', 12);
      await waitUntil(() => errors.length >= 6);
      expect(errors.map((e) => e.error_code).sort()).toEqual(
        ['invalid_json', 'message_too_large', 'unknown_message_type', 'validation_failed', 'validation_failed', 'validation_failed'].sort(),
      );
      expect(socket.connected).toBe(true);
      const pong = new Promise((resolve) => socket.once('pong', resolve));
      socket.emit('message', { type: 'ping' });
      await expect(pong).resolves.toHaveProperty('timestamp');
      const events = await chatOverSocket(socket, { message: 'still works' });
      expect(events.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
    } finally {
      socket.disconnect();
    }
  });

  it('refuses absurd paging, deep nesting and prototype keys with 4xx, and answers JSON outside the API', async () => {
    expect((await api(system.url, 'GET', '/sessions?offset=18446744073709550592', { apiKey: TEST_API_KEY })).status).toBe(422);
    const nested = '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000);
    const deep = await post(`{"message":"hi","x":${nested}}`);
    expect({ status: deep.status, code: deep.body.error_code }).toEqual({ status: 400, code: 'too_deeply_nested' });
    const arrays = await post(`{"message":"hi","x":${'['.repeat(3_000)}${']'.repeat(3_000)}}`);
    expect(arrays.status).toBe(400);
    // `/` is the web UI; any other path outside the API answers the API's JSON 404.
    const outside = await fetch(`${system.url}/nothing-here`);
    expect(outside.status).toBe(404);
    expect(await outside.json()).toMatchObject({ error_code: 'not_found' });

    const socket = await connectChat(system.url, TEST_API_KEY);
    try {
      const errors: Record<string, unknown>[] = [];
      socket.on('event', (e) => e.event_type === 'error' && errors.push(e));
      const ack = await socket.timeout(10_000).emitWithAck('message', { type: 'chat', payload: { constructor: [] } });
      expect(ack).toEqual({ ok: false, error_code: 'validation_failed' });
      // (socket.io-client itself recurses over what it sends, so a thousand levels here.)
      const deepAck = await socket.timeout(10_000).emitWithAck('message', JSON.parse(`{"type":"chat","payload":${'{"a":'.repeat(1_000)}1${'}'.repeat(1_000)}}`));
      expect(deepAck).toEqual({ ok: false, error_code: 'too_deeply_nested' });
      expect(errors.every((e) => (e.details as { status: number }).status < 500)).toBe(true);
    } finally {
      socket.disconnect();
    }
  });

  it('stays healthy after all of it', async () => {
    expect((await api(system.url, 'GET', '/health')).status).toBe(200);
    expect(system.gateway.proc.exitCode).toBeNull();
    expect(system.workers[0].proc.exitCode).toBeNull();
  });
});
