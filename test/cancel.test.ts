import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'socket.io-client';
import { api, assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat, sendMessage, waitUntil, runEvent } from './support/event-waits.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

describe('cancel', () => {
  let system: TestSystem;
  let slowServer: Server;
  let slowRequests = 0;
  let slowClosed = 0;

  beforeAll(async () => {
    // A loopback server that never answers: a tool call to it runs until cancelled.
    slowServer = createServer((req) => {
      slowRequests++;
      req.socket.on('close', () => slowClosed++);
    });
    await new Promise<void>((r) => slowServer.listen(0, '127.0.0.1', r));
    const port = (slowServer.address() as AddressInfo).port;
    system = await TestSystem.start({
      workers: 2,
      env: { DATAAGENT_WORKER_CONCURRENCY: '2', DATAAGENT_OUTBOUND_ALLOWLIST: `127.0.0.1:${port}`, DATAAGENT_TEST_SLOW_PORT: String(port) },
      extraGateways: [{}],
    });
  });
  afterAll(async () => {
    await system?.stop();
    slowServer?.closeAllConnections();
    await new Promise((r) => slowServer?.close(r));
  });

  /** Runs the workers are executing now, as their metrics endpoints say. */
  async function runsActive(): Promise<number> {
    const counts = await Promise.all(
      system.workers.map(async (worker) => {
        const text = await (await fetch(worker.metricsUrl!)).text();
        const value = /^dataagent_runs_active (\S+)$/m.exec(text)?.[1];
        if (value === undefined) throw new Error(`no dataagent_runs_active at ${worker.metricsUrl}`);
        return Number(value);
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  /**
   * Resolves once no event of the runs so far can still reach this socket. A done seals its
   * run's log, so nothing of the run goes out through it afterwards; once no worker runs
   * anything, nothing else of it can be published either. A new run in each session then
   * serves as a barrier: its events follow, on the same channel and the same socket, whatever
   * was published before them, so once they are in, any late event would be too.
   */
  async function settled(socket: Socket, events: EventCollector, sessionIds: string[]): Promise<void> {
    await waitUntil(async () => (await runsActive()) === 0);
    const barriers = await Promise.all(sessionIds.map((session_id) => sendChat(socket, { message: 'barrier', session_id })));
    expect(barriers.map((b) => [b.ok, b.session_id])).toEqual(sessionIds.map((id) => [true, id]));
    await Promise.all(barriers.map((b) => events.done(b.run_id)));
  }

  it('cancels while streaming: the LLM request is aborted and the run ends cancelled, once', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const aborted = system.llm.abortedStreams;
      const ack = await sendChat(socket, { message: '[[chunks:200]] [[slow:50]]' });
      await events.next(runEvent(ack.run_id, 'text'));
      const answer = await api(system.url, 'POST', `/chat/${ack.session_id}/cancel`, { apiKey: TEST_API_KEY });
      expect(answer.body).toMatchObject({ cancelled: true, run_ids: [ack.run_id] });
      await events.done(ack.run_id);
      await system.llm.idle();
      expect(system.llm.abortedStreams).toBe(aborted + 1);
      await settled(socket, events, [ack.session_id]);
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      expect(run.at(-1)).toMatchObject({ event_type: 'done', cancelled: true });
      expect(run.filter((e) => e.event_type === 'text').length).toBeLessThan(200);
      const again = await api(system.url, 'POST', `/chat/${ack.session_id}/cancel`, { apiKey: TEST_API_KEY });
      expect(again.body).toMatchObject({ cancelled: false, reason: 'no_active_run' });
    } finally {
      socket.disconnect();
    }
  });

  it('cancels while queued: the job leaves the queue and ends cancelled', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      // Four hanging runs fill both workers' two slots; the fifth waits in the queue.
      const busy = await Promise.all([1, 2, 3, 4].map(() => sendChat(socket, { message: '[[hang]]' })));
      await Promise.all(busy.map((b) => events.next(runEvent(b.run_id, 'run_started'))));
      const queued = await sendChat(socket, { message: 'waiting in line' });
      await events.next(runEvent(queued.run_id, 'run_queued'));
      const answer = await sendMessage(socket, 'cancel', { session_id: queued.session_id });
      expect(answer).toMatchObject({ ok: true, cancelled: true, run_ids: [queued.run_id] });
      const done = await events.done(queued.run_id);
      expect(done.cancelled).toBe(true);
      expect(events.ofRun(queued.run_id).map((e) => e.event_type)).toEqual(['run_queued', 'done']);

      // Cancel the hanging ones, two of them twice at once.
      const answers = await Promise.all(busy.flatMap((b, i) => (i < 2 ? [b, b] : [b]).map((x) => sendMessage(socket, 'cancel', { session_id: x.session_id }))));
      expect(answers.filter((a) => a.cancelled).length).toBeGreaterThanOrEqual(4);
      for (const b of busy) {
        await events.done(b.run_id);
      }
      await system.llm.idle();
      await settled(socket, events, busy.map((b) => b.session_id));
      for (const b of busy) {
        const run = events.ofRun(b.run_id);
        assertWellFormedRun(run);
        expect(run.at(-1)).toMatchObject({ cancelled: true });
      }
      const messages = await api(system.url, 'GET', `/sessions/${queued.session_id}/messages`, { apiKey: TEST_API_KEY });
      expect(messages.body.messages.map((m: { role: string }) => m.role)).toEqual(['user']);
    } finally {
      socket.disconnect();
    }
  });

  it('cancels while a tool runs: the outbound request is aborted', async () => {
    const port = system.env.DATAAGENT_TEST_SLOW_PORT;
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const before = slowRequests;
      const ack = await sendChat(socket, { message: `[[tool:http_request {"url":"http://127.0.0.1:${port}/never"}]]` });
      await events.next(runEvent(ack.run_id, 'tool_call'));
      await waitUntil(() => slowRequests > before);
      await sendMessage(socket, 'cancel', { session_id: ack.session_id });
      const done = await events.done(ack.run_id);
      expect(done.cancelled).toBe(true);
      await waitUntil(() => slowClosed >= slowRequests);
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      // After a cancel only the done is accepted into the log: no late tool result.
      expect(run.map((e) => e.event_type)).toEqual(['run_queued', 'run_started', 'usage', 'tool_call', 'done']);
    } finally {
      socket.disconnect();
    }
  });

  it('reaches the worker from another gateway than the one streaming', async () => {
    const gatewayB = system.extraGateways[0]!;
    const socket = await connectChat(gatewayB.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: '[[chunks:200]] [[slow:50]]' });
      await events.next(runEvent(ack.run_id, 'text'));
      const answer = await api(system.url, 'POST', `/chat/${ack.session_id}/cancel`, { apiKey: TEST_API_KEY });
      expect(answer.body.cancelled).toBe(true);
      expect((await events.done(ack.run_id)).cancelled).toBe(true);
    } finally {
      socket.disconnect();
    }
  });

  it('answers a cancel for an unknown or foreign session with 404', async () => {
    expect((await api(system.url, 'POST', '/chat/nope/cancel', { apiKey: TEST_API_KEY })).status).toBe(404);
  });
});
