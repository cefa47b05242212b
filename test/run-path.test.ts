import type { EventDict } from '#core/events/execution-event.js';
import { api, assertWellFormedRun, chatOverSocket, connectChat } from './support/chat-clients.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

const textOf = (events: EventDict[]) => events.filter((e) => e.event_type === 'text').map((e) => e.content).join('');

describe('run path: gateway → BullMQ → worker → events → MySQL', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 2 });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('streams two Socket.IO sessions at once, each seeing only its own events in seq order', async () => {
    const [a, b] = await Promise.all([connectChat(system.url, TEST_API_KEY), connectChat(system.url, OTHER_API_KEY)]);
    try {
      const [ea, eb] = await Promise.all([
        chatOverSocket(a, { message: 'first [[chunks:20]]' }),
        chatOverSocket(b, { message: 'second [[chunks:20]]' }),
      ]);
      for (const events of [ea, eb]) {
        assertWellFormedRun(events);
        expect(events[0].event_type).toBe('run_queued');
        expect(events[1].event_type).toBe('run_started');
        expect(events.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
        expect(events.filter((e) => e.event_type === 'text' && !e.is_final)).toHaveLength(20);
      }
      expect(new Set(ea.map((e) => e.session_id)).size).toBe(1);
      expect(ea[0].session_id).not.toBe(eb[0].session_id);
      expect(ea[0].run_id).not.toBe(eb[0].run_id);
    } finally {
      a.disconnect();
      b.disconnect();
    }
  });

  it('answers POST /chat with the events, keeps the history oldest first, and keeps it across restarts', async () => {
    const first = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { message: 'hello there' } });
    expect(first.status).toBe(200);
    const { session_id, run_id, events } = first.body;
    expect(typeof session_id).toBe('string');
    assertWellFormedRun(events);
    expect(events.every((e: EventDict) => e.run_id === run_id && e.session_id === session_id)).toBe(true);
    const answer = textOf(events);
    expect(answer.length).toBeGreaterThan(0);

    const second = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { message: 'and again', session_id } });
    expect(second.status).toBe(200);
    expect(second.body.session_id).toBe(session_id);

    // The worker saw the first turn as history.
    const lastRequest = system.llm.requests.at(-1)!;
    expect(JSON.stringify(lastRequest.body.messages)).toContain('hello there');

    const listed = await api(system.url, 'GET', `/sessions/${session_id}/messages`, { apiKey: TEST_API_KEY });
    expect(listed.status).toBe(200);
    expect(listed.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(listed.body.messages[0].content).toBe('hello there');
    expect(listed.body.messages[1].content).toBe(answer);

    const page = await api(system.url, 'GET', `/sessions/${session_id}/messages?limit=2&offset=2`, { apiKey: TEST_API_KEY });
    expect(page.body.messages.map((m: { content: string }) => m.content)[0]).toBe('and again');

    await Promise.all([system.gateway.stop(), ...system.workers.map((w) => w.stop())]);
    system.workers = [];
    await Promise.all([system.restartGateway(), system.addWorker(), system.addWorker()]);

    const after = await api(system.url, 'GET', `/sessions/${session_id}/messages`, { apiKey: TEST_API_KEY });
    expect(after.body.messages).toEqual(listed.body.messages);
    const sessions = await api(system.url, 'GET', '/sessions', { apiKey: TEST_API_KEY });
    expect(sessions.body.sessions.map((s: { session_id: string }) => s.session_id)).toContain(session_id);
  });

  it('lists agents and reports health of Redis and the database', async () => {
    const agents = await api(system.url, 'GET', '/agents', { apiKey: TEST_API_KEY });
    expect(agents.body.agents[0]).toMatchObject({ assistant_id: 'default' });
    const health = await api(system.url, 'GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', redis: 'up', database: 'up' });
    expect(typeof health.body.version).toBe('string');
    expect(typeof health.body.uptime).toBe('number');
  });

  it('deletes a session and hides other users sessions as not found', async () => {
    const { body } = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { message: 'private' } });
    const id = body.session_id;
    for (const path of [`/sessions/${id}`, `/sessions/${id}/messages`]) {
      const foreign = await api(system.url, 'GET', path, { apiKey: OTHER_API_KEY });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error_code).toBe('session_not_found');
    }
    const hijack = await api(system.url, 'POST', '/chat', { apiKey: OTHER_API_KEY, body: { message: 'x', session_id: id } });
    expect(hijack.status).toBe(404);
    expect((await api(system.url, 'DELETE', `/sessions/${id}`, { apiKey: OTHER_API_KEY })).status).toBe(404);
    expect((await api(system.url, 'DELETE', `/sessions/${id}`, { apiKey: TEST_API_KEY })).status).toBe(200);
    expect((await api(system.url, 'GET', `/sessions/${id}`, { apiKey: TEST_API_KEY })).status).toBe(404);
  });
});
