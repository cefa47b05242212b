import { EventSource } from 'eventsource';
import type { EventDict } from '#core/events/execution-event.js';
import { chatToDone } from './support/event-waits.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

/**
 * Browsers' EventSource reconnects whenever a stream ends, unless the server answers 204. A run's
 * stream ends with its done, so the reconnect that follows (with Last-Event-ID of the done) must
 * get 204, or the client replays, reconnects and replays again forever. Driven by the
 * `eventsource` package, which follows the same rules as browsers.
 */
describe('EventSource on a run', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1 });
  });
  afterAll(async () => {
    await system?.stop();
  });

  /** Follows a run with EventSource until it closes (or `waitMs` passes): what arrived, and every request it made. */
  async function follow(runId: string, lastEventId?: string, waitMs = 5_000) {
    const requests: Array<{ lastEventId: string | null; status: number }> = [];
    const received: EventDict[] = [];
    const source = new EventSource(`${system.url}/api/v1/runs/${runId}/events`, {
      fetch: async (url, init) => {
        const headers = new Headers(init?.headers);
        headers.set('x-api-key', TEST_API_KEY);
        if (lastEventId && !headers.has('last-event-id')) headers.set('last-event-id', lastEventId);
        const res = await fetch(url, { ...init, headers });
        requests.push({ lastEventId: headers.get('last-event-id'), status: res.status });
        return res;
      },
    });
    for (const type of ['run_queued', 'run_started', 'text', 'done']) source.addEventListener(type, (e) => received.push(JSON.parse(e.data) as EventDict));
    const deadline = Date.now() + waitMs;
    while (source.readyState !== EventSource.CLOSED && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const state = source.readyState;
    source.close();
    return { requests, received, closed: state === EventSource.CLOSED };
  }

  it('stops after the done: the reconnect with the done as Last-Event-ID gets 204 and the source closes', async () => {
    const run = await chatToDone(system.url, TEST_API_KEY, 'hello there');
    const runId = String(run[0]!.run_id);
    const done = run.at(-1)!;

    const whole = await follow(runId);
    expect(whole.closed).toBe(true);
    expect(whole.received.map((e) => e.seq)).toEqual(run.filter((e) => ['run_queued', 'run_started', 'text', 'done'].includes(e.event_type)).map((e) => e.seq));
    expect(whole.requests).toEqual([
      { lastEventId: null, status: 200 },
      { lastEventId: `${runId}:${done.seq}`, status: 204 },
    ]);

    const caughtUp = await follow(runId, `${runId}:${done.seq}`);
    expect(caughtUp).toEqual({ requests: [{ lastEventId: `${runId}:${done.seq}`, status: 204 }], received: [], closed: true });
  });
});
