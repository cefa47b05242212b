import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FileMemoryStore, MemoryNoteError } from './memory-store.js';

const DAY = 24 * 60 * 60 * 1000;

describe('FileMemoryStore', () => {
  let root: string;
  let clock: number;
  const now = () => new Date(clock);

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'memory-store-'));
    clock = Date.parse('2025-01-01T00:00:00Z');
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('stores notes under memories/{user_id}/{assistant_id}/ and recalls them newest first', async () => {
    const store = new FileMemoryStore(root, { now });
    for (const text of ['first', 'second', 'third']) {
      await store.add('alice', 'analyst', text);
      clock += 1000;
    }
    await store.add('alice', 'analyst', 'same millisecond as the next');
    await store.add('alice', 'analyst', 'fourth');
    expect((await store.recall('alice', 'analyst', 10)).map((n) => n.text)).toEqual(['fourth', 'same millisecond as the next', 'third', 'second', 'first']);
    expect((await store.recall('alice', 'analyst', 2)).map((n) => n.text)).toEqual(['fourth', 'same millisecond as the next']);
    expect(await readdir(path.join(root, 'memories', 'alice', 'analyst'))).toHaveLength(5);
  });

  it('keeps users and assistants apart, with ids that cannot escape their folder', async () => {
    const store = new FileMemoryStore(root, { now });
    await store.add('alice', 'analyst', 'alice analyst');
    await store.add('alice', 'writer', 'alice writer');
    await store.add('bob', 'analyst', 'bob analyst');
    await store.add('../alice', 'analyst', 'sneaky');
    expect((await store.recall('alice', 'analyst')).map((n) => n.text)).toEqual(['alice analyst']);
    expect((await store.recall('alice', 'writer')).map((n) => n.text)).toEqual(['alice writer']);
    expect((await store.recall('bob', 'analyst')).map((n) => n.text)).toEqual(['bob analyst']);
    expect((await store.recall('bob', 'writer')).map((n) => n.text)).toEqual([]);
    expect(store.userDir('../alice').startsWith(path.join(root, 'memories') + path.sep)).toBe(true);
  });

  it('keeps tenants apart when the storage root names {tenant_id}', async () => {
    const store = new FileMemoryStore(path.join(root, '{tenant_id}'), { now });
    await store.add({ tenantId: 'acme', userId: 'alice' }, 'a', 'acme note');
    expect(await store.recall({ tenantId: 'other', userId: 'alice' }, 'a')).toEqual([]);
    expect((await store.recall({ tenantId: 'acme', userId: 'alice' }, 'a')).map((n) => n.text)).toEqual(['acme note']);
    expect(store.assistantDir({ tenantId: 'acme', userId: 'alice' }, 'a')).toBe(path.join(root, 'acme', 'memories', 'alice', 'a'));
  });

  it('keeps the same user id of two tenants apart, and clears only the tenant asked for', async () => {
    const store = new FileMemoryStore(root, { now });
    await store.add({ tenantId: 'acme', userId: 'alice' }, 'a', 'acme alice');
    await store.add({ tenantId: 'globex', userId: 'alice' }, 'a', 'globex alice');
    expect((await store.recall({ tenantId: 'acme', userId: 'alice' }, 'a')).map((n) => n.text)).toEqual(['acme alice']);
    expect(store.userDir({ tenantId: 'acme', userId: 'alice' })).toBe(path.join(root, 'tenants', 'acme', 'memories', 'alice'));
    await store.clear({ tenantId: 'acme', userId: 'alice' });
    expect(await store.recall({ tenantId: 'acme', userId: 'alice' }, 'a')).toEqual([]);
    expect((await store.recall({ tenantId: 'globex', userId: 'alice' }, 'a')).map((n) => n.text)).toEqual(['globex alice']);
  });

  it("moves the default tenant's notes from where they were kept before the tenant was in the path", async () => {
    await new FileMemoryStore(root, { now }).add('alice', 'a', 'kept from before');
    const store = new FileMemoryStore(root, { now });
    expect((await store.recall({ tenantId: 'default', userId: 'alice' }, 'a')).map((n) => n.text)).toEqual(['kept from before']);
    expect(await readdir(path.join(root, 'memories'))).toEqual([]);
    // Another tenant's alice never gets them.
    expect(await new FileMemoryStore(root, { now }).recall({ tenantId: 'acme', userId: 'alice' }, 'a')).toEqual([]);
  });

  it('drops and deletes notes older than the retention period', async () => {
    const store = new FileMemoryStore(root, { now, retentionDays: 30 });
    await store.add('alice', 'a', 'old');
    clock += 20 * DAY;
    await store.add('alice', 'a', 'recent');
    clock += 11 * DAY;
    expect((await store.recall('alice', 'a')).map((n) => n.text)).toEqual(['recent']);
    expect(await readdir(path.join(root, 'memories', 'alice', 'a'))).toHaveLength(1);
  });

  it('defaults to a 90-day retention', async () => {
    const store = new FileMemoryStore(root, { now });
    await store.add('alice', 'a', 'note');
    clock += 89 * DAY;
    expect(await store.recall('alice', 'a')).toHaveLength(1);
    clock += 2 * DAY;
    expect(await store.recall('alice', 'a')).toHaveLength(0);
  });

  it('clears all of a user\'s memories, or one assistant\'s', async () => {
    const store = new FileMemoryStore(root, { now });
    await store.add('alice', 'a', 'a1');
    await store.add('alice', 'b', 'b1');
    await store.add('bob', 'a', 'bob');
    await store.clearAssistant('alice', 'a');
    expect(await store.recall('alice', 'a')).toEqual([]);
    expect(await store.recall('alice', 'b')).toHaveLength(1);
    await store.clear('alice');
    expect(await store.recall('alice', 'b')).toEqual([]);
    expect(await readdir(path.join(root, 'memories'))).toEqual(['bob']);
    await expect(store.clear('nobody')).resolves.toBeUndefined();
  });

  it('loses no note when runs of one user add at the same time', async () => {
    // Two store instances stand for two worker processes sharing the folder.
    const stores = [new FileMemoryStore(root, { now }), new FileMemoryStore(root, { now })];
    await Promise.all(Array.from({ length: 100 }, (_, i) => stores[i % 2]!.add('alice', 'a', `note ${i}`)));
    const texts = (await stores[0]!.recall('alice', 'a', 1000)).map((n) => n.text);
    expect(texts.sort()).toEqual(Array.from({ length: 100 }, (_, i) => `note ${i}`).sort());
  });

  it('refuses empty and overlong notes', async () => {
    const store = new FileMemoryStore(root, { now, maxNoteChars: 10 });
    await expect(store.add('alice', 'a', '   ')).rejects.toBeInstanceOf(MemoryNoteError);
    await expect(store.add('alice', 'a', 'x'.repeat(11))).rejects.toThrow('at most 10');
  });
});
