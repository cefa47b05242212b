import type { EventDict } from '#core/events/execution-event.js';
import { waitForDone } from './wait-for-done.js';

// Only the fields the wait looks at.
const event = (seq: number, event_type: EventDict['event_type'] = 'text', extra: Record<string, unknown> = {}): EventDict =>
  ({ event_type, timestamp: '', session_id: 's', run_id: 'r', seq, ...extra }) as EventDict;

/** A run to follow: `replay` is delivered while following starts; `emit` delivers live events. */
function fakeRun(replay: EventDict[] = []) {
  let listener: ((event: EventDict) => void) | undefined;
  let following = false;
  const follow = async (l: (event: EventDict) => void) => {
    listener = l;
    following = true;
    for (const e of replay) l(e);
    return () => {
      following = false;
      listener = undefined;
    };
  };
  return { follow, emit: (e: EventDict) => listener?.(e), following: () => following };
}

describe('waitForDone', () => {
  it("resolves with the run's done, having passed every event on, and stops following", async () => {
    const run = fakeRun([event(1)]);
    const seen: number[] = [];
    const waiting = waitForDone(run.follow, (e) => seen.push(e.seq), { timeoutMs: 10_000 });
    await Promise.resolve();
    run.emit(event(2));
    run.emit(event(3, 'done', { cancelled: true }));
    const wait = await waiting;
    expect(wait).toEqual({ outcome: 'done', done: event(3, 'done', { cancelled: true }) });
    expect(seen).toEqual([1, 2, 3]);
    expect(run.following()).toBe(false);
  });

  it('resolves with a done that came in the replay, before the timer would start', async () => {
    const run = fakeRun([event(1), event(2, 'done')]);
    const wait = await waitForDone(run.follow, () => undefined, { timeoutMs: 10_000 });
    expect(wait.outcome).toBe('done');
    expect(run.following()).toBe(false);
  });

  it('times out when no done comes, and stops following', async () => {
    const run = fakeRun([event(1)]);
    const wait = await waitForDone(run.follow, () => undefined, { timeoutMs: 20 });
    expect(wait).toEqual({ outcome: 'timeout' });
    expect(run.following()).toBe(false);
  });

  it('gives up when the signal aborts, before or during the wait', async () => {
    const during = fakeRun();
    const left = new AbortController();
    const waiting = waitForDone(during.follow, () => undefined, { timeoutMs: 10_000, signal: left.signal });
    await Promise.resolve();
    left.abort();
    expect(await waiting).toEqual({ outcome: 'aborted' });
    expect(during.following()).toBe(false);

    const before = fakeRun();
    expect(await waitForDone(before.follow, () => undefined, { timeoutMs: 10_000, signal: AbortSignal.abort() })).toEqual({ outcome: 'aborted' });
    expect(before.following()).toBe(false);
  });

  it('throws what following throws', async () => {
    const follow = () => Promise.reject(new Error('Redis is down'));
    await expect(waitForDone(follow, () => undefined, { timeoutMs: 20 })).rejects.toThrow('Redis is down');
  });
});
