import type { DueParkedRun, ParkedRunDeadlines } from './parked-run-deadlines.js';
import { ParkedRunExpiry } from './parked-run-expiry.js';
import type { ExpireOutcome } from '#core/run/run-lifecycle.js';

/** A deadline set in memory: the entries due, what was forgotten, and whether the lease is free. */
function fakeDeadlines(due: DueParkedRun[], leased = false) {
  const forgotten: string[] = [];
  let released = 0;
  const deadlines = {
    lease: async () => (leased ? null : async () => void released++),
    due: async (limit: number) => due.slice(0, limit),
    forget: async (entry: DueParkedRun) => void forgotten.push(entry.run.runId),
  } as unknown as ParkedRunDeadlines;
  return { deadlines, forgotten, released: () => released };
}

const entry = (runId: string): DueParkedRun => ({ run: { runId, sessionId: 's', tenantId: 't' }, deadline: 1 });
const logger = { info: () => undefined, warn: () => undefined };

describe('ParkedRunExpiry', () => {
  it('asks the lifecycle to expire each due run, counts the ends, and forgets every entry dealt with', async () => {
    const outcomes: Record<string, ExpireOutcome> = { ended1: 'ended', ended2: 'ended', answered: 'answered', gone: 'not_parked' };
    const { deadlines, forgotten, released } = fakeDeadlines(Object.keys(outcomes).map(entry));
    const asked: string[] = [];
    const expiry = new ParkedRunExpiry({ deadlines, lifecycle: { expire: async (run) => (asked.push(run.runId), outcomes[run.runId]!) }, logger });
    expect(await expiry.sweep()).toBe(2);
    expect(asked.sort()).toEqual(Object.keys(outcomes).sort());
    expect(forgotten.sort()).toEqual(Object.keys(outcomes).sort());
    expect(released()).toBe(1);
  });

  it('keeps the entry of a run a worker holds, and of one whose end failed, for the next sweep', async () => {
    const { deadlines, forgotten, released } = fakeDeadlines([entry('held'), entry('broken'), entry('ended')]);
    const expire = async (run: { runId: string }): Promise<ExpireOutcome> => {
      if (run.runId === 'broken') throw new Error('Redis went away');
      return run.runId === 'held' ? 'running' : 'ended';
    };
    expect(await new ParkedRunExpiry({ deadlines, lifecycle: { expire }, logger }).sweep()).toBe(1);
    expect(forgotten).toEqual(['ended']);
    expect(released()).toBe(1);
  });

  it('does nothing while another process holds the sweep lease', async () => {
    const { deadlines } = fakeDeadlines([entry('r')], true);
    let asked = 0;
    expect(await new ParkedRunExpiry({ deadlines, lifecycle: { expire: async () => (asked++, 'ended') }, logger }).sweep()).toBe(0);
    expect(asked).toBe(0);
  });
});
