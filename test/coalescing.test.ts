import type { Socket } from 'socket.io-client';
import { assertWellFormedRun, chatOverSocket, connectChat } from './support/chat-clients.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

const STREAMS = 300;
const CHUNKS = 100;
/** What the scripted LLM streams for `[[chunks:N]]`: `tok0 `, `tok1 `, … back to back. */
const SENT = Array.from({ length: CHUNKS }, (_, i) => `tok${i} `).join('');

describe('text coalescing (DATAAGENT_TEXT_COALESCE_MS)', () => {
  let system: TestSystem;

  afterAll(async () => {
    await system?.stop();
  });

  it(`keeps ${STREAMS} bursting streams gapless, with their text joined exactly as the model sent it, in fewer events`, async () => {
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_TEXT_COALESCE_MS: '10', DATAAGENT_WORKER_CONCURRENCY: String(STREAMS) } });
    const sockets: Socket[] = [];
    for (let i = 0; i < 30; i++) sockets.push(await connectChat(system.url, TEST_API_KEY));
    try {
      const runs = await Promise.all(
        Array.from({ length: STREAMS }, (_, i) => chatOverSocket(sockets[i % sockets.length]!, { message: `burst ${i} [[chunks:${CHUNKS}]]` }, 120_000)),
      );
      let textEvents = 0;
      for (const events of runs) {
        assertWellFormedRun(events);
        expect(events.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
        const texts = events.filter((e) => e.event_type === 'text').filter((e) => !e.is_final);
        expect(texts.map((e) => e.content).join('')).toBe(SENT);
        textEvents += texts.length;
      }
      // Deltas that arrive in one burst queue up while the run's previous event is published: they are joined.
      expect(textEvents).toBeLessThan(STREAMS * CHUNKS);
      process.stderr.write(`coalescing: ${STREAMS * CHUNKS} deltas went out as ${textEvents} text events\n`);
    } finally {
      sockets.forEach((s) => s.disconnect());
    }
  });
});
