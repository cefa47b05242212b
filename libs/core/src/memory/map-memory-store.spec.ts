import { MapMemoryStore } from './map-memory-store.js';
import { MemoryNoteError } from './memory-store.js';

const DAY = 24 * 60 * 60 * 1000;
const alice = { tenantId: 'acme', userId: 'alice' };

describe('MapMemoryStore', () => {
  let clock: number;
  const now = () => new Date(clock);

  beforeEach(() => {
    clock = Date.parse('2025-01-01T00:00:00Z');
  });

  it('recalls the newest notes first, in adding order within one millisecond, up to the limit', async () => {
    const store = new MapMemoryStore(now);
    for (const text of ['first', 'second', 'third']) {
      await store.add(alice, 'analyst', text);
      clock += 1000;
    }
    for (const text of ['tie 1', 'tie 2', 'tie 3']) await store.add(alice, 'analyst', text);
    expect((await store.recall(alice, 'analyst', 10)).map((n) => n.text)).toEqual(['tie 3', 'tie 2', 'tie 1', 'third', 'second', 'first']);
    expect((await store.recall(alice, 'analyst', 2)).map((n) => n.text)).toEqual(['tie 3', 'tie 2']);
    expect(await store.recall(alice, 'analyst', 0)).toEqual([]);
  });

  it('places a note added with an earlier time (an import) by that time', async () => {
    const store = new MapMemoryStore(now);
    await store.add(alice, 'a', 'today');
    const imported = await store.add(alice, 'a', 'last week', new Date(clock - 7 * DAY));
    expect(imported.createdAt).toBe('2024-12-25T00:00:00.000Z');
    expect((await store.recall(alice, 'a', 10)).map((n) => n.text)).toEqual(['today', 'last week']);
  });

  it('keeps tenants, users and assistants apart; clear takes one user of one tenant, every assistant', async () => {
    const store = new MapMemoryStore(now);
    const globexAlice = { tenantId: 'globex', userId: 'alice' };
    const bob = { tenantId: 'acme', userId: 'bob' };
    await store.add(alice, 'a', 'acme alice a');
    await store.add(alice, 'b', 'acme alice b');
    await store.add(globexAlice, 'a', 'globex alice');
    await store.add(bob, 'a', 'acme bob');
    expect((await store.recall(alice, 'a', 10)).map((n) => n.text)).toEqual(['acme alice a']);
    expect((await store.recall(globexAlice, 'a', 10)).map((n) => n.text)).toEqual(['globex alice']);
    expect(await store.recall(globexAlice, 'b', 10)).toEqual([]);

    await store.clear(alice);
    expect(await store.recall(alice, 'a', 10)).toEqual([]);
    expect(await store.recall(alice, 'b', 10)).toEqual([]);
    expect(await store.recall(globexAlice, 'a', 10)).toHaveLength(1);
    expect(await store.recall(bob, 'a', 10)).toHaveLength(1);
    await expect(store.clear({ tenantId: 'acme', userId: 'nobody' })).resolves.toBeUndefined();
  });

  it('drops notes older than the retention period, for good', async () => {
    const store = new MapMemoryStore(now, { retentionDays: 30 });
    await store.add(alice, 'a', 'old');
    clock += 20 * DAY;
    await store.add(alice, 'a', 'recent');
    clock += 11 * DAY;
    expect((await store.recall(alice, 'a', 10)).map((n) => n.text)).toEqual(['recent']);
    // Deleted, not hidden: turning the clock back does not bring it back.
    clock -= 11 * DAY;
    expect((await store.recall(alice, 'a', 10)).map((n) => n.text)).toEqual(['recent']);
  });

  it('defaults to a 90-day retention', async () => {
    const store = new MapMemoryStore(now);
    await store.add(alice, 'a', 'note');
    clock += 89 * DAY;
    expect(await store.recall(alice, 'a', 10)).toHaveLength(1);
    clock += 2 * DAY;
    expect(await store.recall(alice, 'a', 10)).toHaveLength(0);
  });

  it('refuses empty and overlong notes, and stores them trimmed', async () => {
    const store = new MapMemoryStore(now, { maxNoteChars: 10 });
    await expect(store.add(alice, 'a', '   ')).rejects.toBeInstanceOf(MemoryNoteError);
    await expect(store.add(alice, 'a', 'x'.repeat(11))).rejects.toThrow('at most 10');
    expect((await store.add(alice, 'a', `  ${'x'.repeat(10)}\n`)).text).toBe('x'.repeat(10));
    expect(await new MapMemoryStore(now).add(alice, 'a', 'x'.repeat(2000))).toMatchObject({ text: 'x'.repeat(2000) });
    await expect(new MapMemoryStore(now).add(alice, 'a', 'x'.repeat(2001))).rejects.toBeInstanceOf(MemoryNoteError);
    expect(() => new MapMemoryStore(now, { retentionDays: 0 })).toThrow('retentionDays must be positive');
  });
});
