import type { EventDict } from '#core/events/execution-event.js';
import type { RunEventArchive } from '#core/session/session-store.js';
import { EventArchiver } from './event-archiver.js';

const event = (runId: string, seq: number): EventDict => ({ event_type: 'text', timestamp: '', session_id: 's', run_id: runId, seq, content: `${seq}`, is_final: false });

/** An archive that refuses everything while `down`, and one run's batches always. */
function fakeArchive(state: { down: boolean; poisoned?: string }) {
  const stored = new Map<string, number[]>();
  const write = async (runId: string, events: EventDict[]) => {
    if (state.down) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    if (runId === state.poisoned) throw new Error('bad batch');
    stored.set(runId, [...(stored.get(runId) ?? []), ...events.map((e) => e.seq)]);
  };
  const archive: RunEventArchive = {
    appendBatch: write,
    appendMany: async (batches) => {
      if (state.down || batches.some((b) => b.runId === state.poisoned)) throw new Error('statement failed');
      for (const b of batches) await write(b.runId, b.events);
    },
    list: async () => [],
  };
  return { archive, stored };
}

describe('EventArchiver', () => {
  it('keeps what an unreachable archive refused and writes it, in order, once it is back', async () => {
    const state = { down: true };
    const { archive, stored } = fakeArchive(state);
    const archiver = new EventArchiver(archive, () => undefined, { intervalMs: 60_000 });
    for (let seq = 1; seq <= 3; seq++) archiver.add(event('r1', seq));
    await archiver.flushAll();
    archiver.add(event('r1', 4));
    await archiver.flushRun('r1');
    expect(archiver.pendingEvents).toBe(4);
    state.down = false;
    await archiver.flushAll();
    expect(stored.get('r1')).toEqual([1, 2, 3, 4]);
    expect(archiver.pendingEvents).toBe(0);
    await archiver.close();
  });

  it("writes the other runs when one run's batch is refused", async () => {
    const { archive, stored } = fakeArchive({ down: false, poisoned: 'bad' });
    const archiver = new EventArchiver(archive, () => undefined, { intervalMs: 60_000 });
    archiver.add(event('a', 1));
    archiver.add(event('bad', 1));
    archiver.add(event('b', 1));
    await archiver.flushAll();
    expect(stored.get('a')).toEqual([1]);
    expect(stored.get('b')).toEqual([1]);
    expect(archiver.pendingEvents).toBe(1); // the refused batch, tried again a few times
    for (let i = 0; i < 5; i++) await archiver.flushAll();
    expect(archiver.pendingEvents).toBe(0);
    await archiver.close();
  });

  it('writes the runs that end while a flush is written in one statement', async () => {
    const calls: string[][] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const archive: RunEventArchive = {
      appendBatch: async () => {
        throw new Error('not expected: every batch goes through appendMany');
      },
      appendMany: async (batches) => {
        calls.push(batches.map((b) => b.runId));
        if (calls.length === 1) await held;
      },
      list: async () => [],
    };
    const archiver = new EventArchiver(archive, () => undefined, { intervalMs: 60_000 });
    for (const run of ['a', 'b', 'c', 'd']) archiver.add(event(run, 1));
    const first = archiver.flushRun('a');
    await Promise.resolve();
    const later = ['b', 'c', 'd'].map((run) => archiver.flushRun(run));
    release();
    await Promise.all([first, ...later]);
    expect(calls).toEqual([['a'], ['b', 'c', 'd']]);
    expect(archiver.pendingEvents).toBe(0);
    await archiver.close();
  });

  it('drops the oldest runs past its bound, and reports it', async () => {
    const { archive } = fakeArchive({ down: true });
    const reports: number[] = [];
    const archiver = new EventArchiver(archive, (_err, detail) => detail.dropped && reports.push(detail.dropped), { intervalMs: 60_000, maxPendingEvents: 3 });
    for (const run of ['a', 'b']) for (let seq = 1; seq <= 2; seq++) archiver.add(event(run, seq));
    expect(archiver.pendingEvents).toBeLessThanOrEqual(3);
    expect(reports.reduce((a, b) => a + b, 0)).toBe(2);
    await archiver.close();
  });
});
