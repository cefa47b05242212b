import { GroupCommit } from './group-commit.js';

/** A write that waits until released, recording each batch it was given. */
function gatedWriter(fail: (items: string[]) => boolean = () => false) {
  const batches: string[][] = [];
  const gates: Array<() => void> = [];
  const write = (items: string[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push(items);
      gates.push(() => (fail(items) ? reject(new Error(`refused ${items.join(',')}`)) : resolve()));
    });
  const releaseAll = async () => {
    while (gates.length > 0) {
      gates.shift()!();
      await new Promise((r) => setImmediate(r));
    }
  };
  return { batches, write, releaseAll };
}

describe('GroupCommit', () => {
  it('writes a lone item at once, and the items added meanwhile in one batch after it', async () => {
    const w = gatedWriter();
    const commit = new GroupCommit(w.write);
    const first = commit.add('a');
    expect(w.batches).toEqual([['a']]);
    const rest = ['b', 'c', 'd'].map((x) => commit.add(x));
    expect(commit.waiting).toBe(3);
    await w.releaseAll();
    await Promise.all([first, ...rest]);
    expect(w.batches).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it('caps a batch at maxBatch items', async () => {
    const w = gatedWriter();
    const commit = new GroupCommit(w.write, 2);
    const all = ['a', 'b', 'c', 'd', 'e'].map((x) => commit.add(x));
    await w.releaseAll();
    await Promise.all(all);
    expect(w.batches).toEqual([['a'], ['b', 'c'], ['d', 'e']]);
  });

  it('retries a failed batch item by item: only the bad item fails', async () => {
    const w = gatedWriter((items) => items.includes('bad'));
    const commit = new GroupCommit(w.write);
    const first = commit.add('a');
    const outcomes = ['b', 'bad', 'c'].map((x) => commit.add(x).then(() => 'ok', (err: Error) => err.message));
    await w.releaseAll();
    await first;
    expect(await Promise.all(outcomes)).toEqual(['ok', 'refused bad', 'ok']);
    expect(w.batches).toEqual([['a'], ['b', 'bad', 'c'], ['b'], ['bad'], ['c']]);
  });

  it('goes on with later items after a failure', async () => {
    const w = gatedWriter((items) => items.includes('bad'));
    const commit = new GroupCommit(w.write);
    await w.releaseAll();
    const bad = commit.add('bad').catch((err: Error) => err.message);
    await w.releaseAll();
    expect(await bad).toBe('refused bad');
    const later = commit.add('z');
    await w.releaseAll();
    await later;
    expect(w.batches.at(-1)).toEqual(['z']);
  });
});
