import type { EventDict } from '#core/events/execution-event.js';
import { followEvents, REPLAY_PAGE } from './run-event-stream.js';
import type { RunEventLog } from './run-event-log.js';
import type { RunEventRelay } from './run-event-relay.js';

/** A relay that only counts its listeners. */
function countingRelay() {
  const listeners = new Set<unknown>();
  const relay = {
    watch: async (_run: string, listener: unknown) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  } as unknown as RunEventRelay;
  return { relay, listeners };
}

/** Events as the log holds them: JSON text. */
const texts = (events: EventDict[]): string[] => events.map((e) => JSON.stringify(e));

const event = (seq: number): EventDict => ({ event_type: 'text', timestamp: '', session_id: 's', run_id: 'r', seq, content: `t${seq}`, is_final: false });

describe('followEvents', () => {
  it('replays after afterSeq, then delivers live events', async () => {
    const { relay, listeners } = countingRelay();
    const log = { rangeRaw: async (_run: string, after: number) => texts([event(1), event(2), event(3)].filter((e) => e.seq > after)), lastSeq: async () => 3 } as unknown as RunEventLog;
    const seen: number[] = [];
    const stop = await followEvents(relay, log, { runId: 'r', afterSeq: 1 }, (e) => seen.push(e.seq));
    expect(seen).toEqual([2, 3]);
    expect(listeners.size).toBe(1);
    stop();
    expect(listeners.size).toBe(0);
  });

  it('replays a long log page by page, waiting for the client between pages', async () => {
    const { relay, listeners } = countingRelay();
    const total = REPLAY_PAGE * 2 + 10;
    const all = Array.from({ length: total }, (_, i) => event(i + 1));
    const log = { rangeRaw: async (_run: string, after: number, count?: number) => texts(all.slice(after, count === undefined ? undefined : after + count)), lastSeq: async () => total } as unknown as RunEventLog;
    const seen: number[] = [];
    const seenAtWait: number[] = [];
    const ready = async () => void seenAtWait.push(seen.length);
    const stop = await followEvents(relay, log, { runId: 'r', afterSeq: 0, ready }, (e, live) => {
      expect(live).toBe(false);
      seen.push(e.seq);
    });
    expect(seen).toEqual(all.map((e) => e.seq));
    expect(seenAtWait).toEqual([REPLAY_PAGE, REPLAY_PAGE * 2]);
    stop();
    expect(listeners.size).toBe(0);
  });

  it('stops and releases its subscription when the client cannot take the replay', async () => {
    const { relay, listeners } = countingRelay();
    const all = Array.from({ length: REPLAY_PAGE * 3 }, (_, i) => event(i + 1));
    const log = { rangeRaw: async (_run: string, after: number, count?: number) => texts(all.slice(after, after + (count ?? all.length))), lastSeq: async () => all.length } as unknown as RunEventLog;
    const seen: number[] = [];
    const ready = () => Promise.reject(new Error('stalled'));
    await expect(followEvents(relay, log, { runId: 'r', afterSeq: 0, ready }, (e) => seen.push(e.seq))).rejects.toThrow('stalled');
    expect(seen).toHaveLength(REPLAY_PAGE);
    expect(listeners.size).toBe(0);
  });

  it('releases its subscription when the replay fails', async () => {
    const { relay, listeners } = countingRelay();
    const log = { rangeRaw: async () => Promise.reject(new Error('ERR value is not an integer or out of range')), lastSeq: async () => 0 } as unknown as RunEventLog;
    await expect(followEvents(relay, log, { runId: 'r', afterSeq: 5 }, () => undefined)).rejects.toThrow('out of range');
    expect(listeners.size).toBe(0);
  });

  it('releases its subscription when the archive fails', async () => {
    const { relay, listeners } = countingRelay();
    const log = { rangeRaw: async () => [], lastSeq: async () => 0 } as unknown as RunEventLog;
    const archive = () => Promise.reject(new Error('database down'));
    await expect(followEvents(relay, log, { runId: 'r', afterSeq: 0, archive }, () => undefined)).rejects.toThrow('database down');
    expect(listeners.size).toBe(0);
  });

  it.each([-1, 1.5, 2 ** 32, 1e20, Number.NaN])('refuses afterSeq %p before subscribing', async (afterSeq) => {
    const { relay, listeners } = countingRelay();
    const log = { rangeRaw: async () => [], lastSeq: async () => 0 } as unknown as RunEventLog;
    await expect(followEvents(relay, log, { runId: 'r', afterSeq }, () => undefined)).rejects.toThrow(RangeError);
    expect(listeners.size).toBe(0);
  });
});
