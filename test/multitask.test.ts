import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { api, assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat } from './support/event-waits.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

const MODES = ['reject', 'enqueue', 'interrupt'] as const;

describe('double texting (DATAAGENT_MULTITASK)', () => {
  let system: TestSystem;

  let redis: Redis;
  let queue: Queue;

  beforeAll(async () => {
    // One gateway per mode, started with the system.
    system = await TestSystem.start({ workers: 2, extraGateways: MODES.map((mode) => ({ DATAAGENT_MULTITASK: mode })) });
    redis = new Redis(process.env.DATAAGENT_REDIS_URL!, { maxRetriesPerRequest: null });
    queue = new Queue(system.env.DATAAGENT_QUEUE_NAME!, { connection: redis });
  });
  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    await system?.stop();
  });

  async function twoTexts(mode: (typeof MODES)[number]) {
    const gateway = system.extraGateways[MODES.indexOf(mode)]!;
    const socket = await connectChat(gateway.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const first = await sendChat(socket, { message: '[[chunks:30]] [[slow:30]]' });
      await events.next((e) => e.run_id === first.run_id && e.event_type === 'text');
      const second = await sendChat(socket, { message: 'second [[chunks:3]]', session_id: first.session_id });
      // The second run's job, sampled until the first run's done: a run waiting behind another is woken by that done, never re-delayed to poll.
      const secondJobStates = new Set<string>();
      if (second.ok) {
        const firstDone = events.done(first.run_id);
        let over = false;
        void firstDone.then(() => (over = true));
        while (!over) {
          secondJobStates.add(await queue.getJobState(second.run_id));
          await Promise.race([firstDone, new Promise((r) => setTimeout(r, 20))]);
        }
        await events.done(second.run_id);
      }
      await events.done(first.run_id);
      return { first, second, events, secondJobStates, messages: (await api(gateway.url, 'GET', `/sessions/${first.session_id}/messages`, { apiKey: TEST_API_KEY })).body.messages };
    } finally {
      socket.disconnect();
    }
  }

  it('reject (default): the second message gets 409 while the first runs', async () => {
    const { second, events, first } = await twoTexts('reject');
    expect(second).toMatchObject({ ok: false, error_code: 'run_in_progress' });
    expect((await events.done(first.run_id)).cancelled).toBe(false);
  });

  it('enqueue: the second run starts after the first is done', async () => {
    const { first, second, events, messages, secondJobStates } = await twoTexts('enqueue');
    expect(secondJobStates.has('active')).toBe(true);
    expect(secondJobStates.has('delayed')).toBe(false);
    const firstDone = events.events.findIndex((e) => e.run_id === first.run_id && e.event_type === 'done');
    const secondStart = events.events.findIndex((e) => e.run_id === second.run_id && e.event_type === 'run_started');
    expect(secondStart).toBeGreaterThan(firstDone);
    assertWellFormedRun(events.ofRun(second.run_id));
    expect(messages.map((m: { role: string }) => m.role)).toEqual(['user', 'user', 'assistant', 'assistant']);
    // The second run saw the first run's answer as history.
    const secondRequest = system.llm.requests.find((r) => JSON.stringify(r.body.messages).includes('second [[chunks:3]]'))!;
    expect(secondRequest.body.messages!.map((m: { role: string }) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
  });

  it('interrupt: the first run is cancelled, then the second runs', async () => {
    const { first, second, events } = await twoTexts('interrupt');
    expect((await events.done(first.run_id)).cancelled).toBe(true);
    expect((await events.done(second.run_id)).cancelled).toBe(false);
    const firstDone = events.events.findIndex((e) => e.run_id === first.run_id && e.event_type === 'done');
    const secondStart = events.events.findIndex((e) => e.run_id === second.run_id && e.event_type === 'run_started');
    expect(secondStart).toBeGreaterThan(firstDone);
  });
});
