import type { Socket } from 'socket.io-client';
import type { EventDict } from '#core/events/execution-event.js';
import { assertWellFormedRun, chatOverSocket, connectChat } from './support/chat-clients.js';
import { waitUntil } from './support/event-waits.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

describe('many chats at once', () => {
  let system: TestSystem;

  afterEach(async () => {
    await system?.stop();
  });

  it('completes 200 concurrent chats of 50 chunks with gapless seqs, shared by two workers', async () => {
    system = await TestSystem.start({ workers: 2, env: { DATAAGENT_WORKER_CONCURRENCY: '100' } });
    const sockets: Socket[] = [];
    for (let i = 0; i < 20; i++) sockets.push(await connectChat(system.url, TEST_API_KEY));
    try {
      const runs = await Promise.all(
        Array.from({ length: 200 }, (_, i) => chatOverSocket(sockets[i % sockets.length], { message: `chat ${i} [[chunks:50]]` }, 120_000)),
      );
      const byWorker = new Map<string, number>();
      for (const events of runs) {
        assertWellFormedRun(events);
        expect(events.some((e) => e.event_type === 'error')).toBe(false);
        expect(events.filter((e) => e.event_type === 'text' && !e.is_final)).toHaveLength(50);
        const worker = String(events.find((e) => e.event_type === 'run_started')?.worker_id);
        byWorker.set(worker, (byWorker.get(worker) ?? 0) + 1);
      }
      expect(new Set(runs.map((r) => r[0].run_id)).size).toBe(200);
      expect([...byWorker.keys()].sort()).toEqual(['worker-1', 'worker-2']);
      expect(Math.min(...byWorker.values())).toBeGreaterThan(0);
    } finally {
      sockets.forEach((s) => s.disconnect());
    }
  });

  it('keeps runs queued until a worker starts, then that worker picks them up', async () => {
    system = await TestSystem.start({ workers: 0 });
    const socket = await connectChat(system.url, TEST_API_KEY);
    try {
      const seen: EventDict[] = [];
      socket.on('event', (e: EventDict) => seen.push(e));
      const pending = Array.from({ length: 10 }, (_, i) => chatOverSocket(socket, { message: `queued ${i}` }));
      await waitUntil(() => seen.filter((e) => e.event_type === 'run_queued').length === 10);
      expect(seen.some((e) => e.event_type === 'run_started')).toBe(false);
      await system.addWorker();
      const runs = await Promise.all(pending);
      for (const events of runs) {
        assertWellFormedRun(events);
        expect(events.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
      }
    } finally {
      socket.disconnect();
    }
  });
});
