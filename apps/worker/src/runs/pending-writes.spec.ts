import { PendingWrites } from './pending-writes.js';

const down = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED' });

describe('PendingWrites', () => {
  it('writes at once while the database answers', async () => {
    const writes = new PendingWrites(() => undefined, 10, 60_000);
    const done: string[] = [];
    expect(await writes.run('a', async () => void done.push('a'))).toBe(true);
    expect(done).toEqual(['a']);
    await writes.close();
  });

  it('keeps writes for an unreachable database and lands them in order once it is back', async () => {
    let up = false;
    const landed: string[] = [];
    const write = (name: string) => async () => {
      if (!up) throw down();
      landed.push(name);
    };
    const writes = new PendingWrites(() => undefined, 10, 10);
    expect(await writes.run('a', write('a'))).toBe(false);
    // Queued behind the first even though this one could go: order is kept.
    up = true;
    expect(await writes.run('b', write('b'))).toBe(false);
    await new Promise((r) => setTimeout(r, 100));
    expect(landed).toEqual(['a', 'b']);
    expect(writes.size).toBe(0);
    await writes.close();
  });

  it('throws a write that the database refused, instead of retrying it forever', async () => {
    const writes = new PendingWrites(() => undefined, 10, 60_000);
    await expect(writes.run('bad', async () => Promise.reject(Object.assign(new Error('dup'), { code: 'ER_DUP_ENTRY' })))).rejects.toThrow('dup');
    expect(writes.size).toBe(0);
    await writes.close();
  });

  it('drops the oldest write past its bound, and says so', async () => {
    const events: string[] = [];
    const writes = new PendingWrites((event, { name }) => void events.push(`${event}:${name}`), 2, 60_000);
    for (const name of ['a', 'b', 'c']) await writes.run(name, async () => Promise.reject(down()));
    expect(writes.size).toBe(2);
    expect(events).toContain('dropped:a');
    expect(await writes.close()).toBe(2);
  });
});
