import type { EventDict } from '#core/events/execution-event.js';
import type { GatewayProcess } from './support/app-processes.js';
import { assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat, sendMessage } from './support/event-waits.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

/**
 * A gateway killed (-9) mid-stream: the run goes on (it lives on a worker and in Redis), and its
 * client reconnects to another gateway, resumes after its last seq and gets the rest: no gap,
 * no duplicate, one done.
 */
describe('a gateway killed mid-stream', () => {
  let system: TestSystem;
  let other: GatewayProcess;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, extraGateways: [{}] });
    other = system.extraGateways[0]!;
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('its clients resume on another gateway with no gap and no duplicate', async () => {
    const first = await connectChat(system.url, TEST_API_KEY);
    const before = new EventCollector(first);
    const runs = await Promise.all(Array.from({ length: 5 }, () => sendChat(first, { message: '[[chunks:40]] [[slow:50]]' })));
    await Promise.all(runs.map((r) => before.next((e) => e.run_id === r.run_id && e.event_type === 'text' && e.seq >= 8)));
    await system.gateway.kill();
    first.disconnect();

    const second = await connectChat(other.url, TEST_API_KEY);
    const after = new EventCollector(second);
    try {
      for (const r of runs) {
        const seen = before.ofRun(r.run_id);
        const ack = await sendMessage(second, 'resume', { session_id: r.session_id, run_id: r.run_id, after_seq: seen.at(-1)!.seq });
        expect(ack.ok).toBe(true);
      }
      await Promise.all(runs.map((r) => after.done(r.run_id, 30_000)));
      for (const r of runs) {
        const whole: EventDict[] = [...before.ofRun(r.run_id), ...after.ofRun(r.run_id)];
        assertWellFormedRun(whole);
        expect(whole.filter((e) => e.event_type === 'text').map((e) => e.content).join('').split(' ').filter(Boolean)).toHaveLength(40);
      }
    } finally {
      second.disconnect();
    }
  });
});
