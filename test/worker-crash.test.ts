import { api, assertWellFormedRun, connectChat, continuedView } from './support/chat-clients.js';
import { EventCollector, sendChat } from './support/event-waits.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

describe('a worker killed mid-run', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: [{ DATAAGENT_WORKER_ID: 'doomed' }], env: { DATAAGENT_JOB_LOCK_MS: '1000' } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('loses nothing: another worker continues the run, which ends with one done and its answer stored once', async () => {
    const doomed = system.workers[0]!;
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: '[[chunks:30]] [[slow:50]]' });
      await events.next((e) => e.run_id === ack.run_id && e.event_type === 'text' && e.seq >= 5);
      await doomed.kill();
      await system.addWorker({ DATAAGENT_WORKER_ID: 'rescuer' });
      const done = await events.done(ack.run_id, 30_000);
      expect(done.cancelled).toBe(false);
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      const starts = run.filter((e) => e.event_type === 'run_started').map((e) => e.worker_id);
      expect(starts).toEqual(['doomed']);
      const lost = run.filter((e) => e.event_type === 'error');
      expect(lost).toEqual([expect.objectContaining({ error_code: 'worker_lost', recoverable: true, resume_after_seq: expect.any(Number) })]);
      // The model turn cut mid-stream is redone: a client that drops what the error says to drop shows the answer once.
      const shown = continuedView(run).filter((e) => e.event_type === 'text').map((e) => e.content).join('');
      expect(shown.split(' ').filter(Boolean)).toEqual(Array.from({ length: 30 }, (_, i) => `tok${i}`));
      const messages = await api(system.url, 'GET', `/sessions/${ack.session_id}/messages`, { apiKey: TEST_API_KEY });
      expect(messages.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
      expect(messages.body.messages[1].content.split(' ').filter(Boolean)).toHaveLength(30);
    } finally {
      socket.disconnect();
    }
  });
});
