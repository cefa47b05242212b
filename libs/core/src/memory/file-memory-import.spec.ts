import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sanitiseId } from '../workspace/workspace.js';
import { importFileMemories } from './file-memory-import.js';
import { MapMemoryStore } from './map-memory-store.js';
import type { MemoryStore } from './memory-store.js';

const T0 = Date.parse('2025-01-01T00:00:00Z');
const now = () => new Date(T0 + 1000 * 60 * 60);

/** Writes a note the way FileMemoryStore did: `{time}-{seq}-{random}.json` holding {id, text, createdAt}. */
async function writeOldNote(dir: string, at: number, seq: number, text: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const id = `${String(at).padStart(15, '0')}-${String(seq).padStart(6, '0')}-abcd${seq}`;
  await writeFile(path.join(dir, `${id}.json`), JSON.stringify({ id, text, createdAt: new Date(at).toISOString() }));
}

const texts = async (store: MemoryStore, tenantId: string, userId: string, assistantId: string) =>
  (await store.recall({ tenantId, userId }, assistantId, 100)).map((n) => `${n.createdAt.slice(11, 19)} ${n.text}`);

describe('importFileMemories', () => {
  let root: string;
  const userDir = (tenant: string, user: string) => path.join(root, 'tenants', sanitiseId(tenant), 'memories', sanitiseId(user));

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'memory-import-'));
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('moves notes of both earlier layouts into the store with their times and order, and deletes the files', async () => {
    await writeOldNote(path.join(userDir('acme', 'alice'), 'analyst'), T0, 1, 'first');
    await writeOldNote(path.join(userDir('acme', 'alice'), 'analyst'), T0 + 1000, 2, 'tie one');
    await writeOldNote(path.join(userDir('acme', 'alice'), 'analyst'), T0 + 1000, 3, 'tie two');
    await writeOldNote(path.join(userDir('acme', 'alice'), 'writer'), T0, 1, 'writer note');
    await writeOldNote(path.join(userDir('globex', 'alice'), 'analyst'), T0, 1, 'globex alice');
    await writeOldNote(path.join(userDir('acme', 'ann@example.com'), 'data.bot'), T0, 1, 'escaped ids');
    // Before the tenant was in the path: the default tenant's.
    await writeOldNote(path.join(root, 'memories', 'bob', 'analyst'), T0, 1, 'pre-tenant bob');
    // Leftovers the old store could leave: a half-written note and an unreadable one.
    await writeFile(path.join(userDir('acme', 'alice'), 'analyst', '.000001735689600000-000009-ffff.tmp'), '{"id":');
    await writeFile(path.join(userDir('acme', 'alice'), 'analyst', '001735689600000-000009-ffff.json'), 'not json');

    const store = new MapMemoryStore(now);
    expect(await importFileMemories(root, store)).toEqual({ notes: 7, users: 4, skipped: [] });

    expect(await texts(store, 'acme', 'alice', 'analyst')).toEqual(['00:00:01 tie two', '00:00:01 tie one', '00:00:00 first']);
    expect(await texts(store, 'acme', 'alice', 'writer')).toEqual(['00:00:00 writer note']);
    expect(await texts(store, 'globex', 'alice', 'analyst')).toEqual(['00:00:00 globex alice']);
    expect(await texts(store, 'acme', 'ann@example.com', 'data.bot')).toEqual(['00:00:00 escaped ids']);
    expect(await texts(store, 'default', 'bob', 'analyst')).toEqual(['00:00:00 pre-tenant bob']);
    for (const dir of [path.join(root, 'tenants', 'acme', 'memories'), path.join(root, 'tenants', 'globex', 'memories'), path.join(root, 'memories')]) {
      expect(await readdir(dir)).toEqual([]);
    }
    // Nothing left to import a second time.
    expect(await importFileMemories(root, store)).toEqual({ notes: 0, users: 0, skipped: [] });
    expect(await texts(store, 'acme', 'alice', 'analyst')).toHaveLength(3);
  });

  it('imports each note once when two processes import the same folder at the same time', async () => {
    for (let user = 0; user < 20; user++) {
      for (let i = 0; i < 5; i++) await writeOldNote(path.join(userDir('acme', `user-${user}`), 'a'), T0 + i, i, `note ${i}`);
    }
    const store = new MapMemoryStore(now);
    const [one, two] = await Promise.all([importFileMemories(root, store), importFileMemories(root, store)]);
    expect(one.notes + two.notes).toBe(100);
    expect(one.users + two.users).toBe(20);
    for (let user = 0; user < 20; user++) expect(await texts(store, 'acme', `user-${user}`, 'a')).toHaveLength(5);
  });

  it('puts back what the store could not take, and stores it on the next try', async () => {
    for (let i = 0; i < 3; i++) await writeOldNote(path.join(userDir('acme', 'alice'), 'a'), T0 + i, i, `note ${i}`);
    const store = new MapMemoryStore(now);
    let calls = 0;
    const failing: MemoryStore = {
      add: async (...args) => {
        if (++calls === 2) throw new Error('database unreachable');
        return store.add(...args);
      },
      recall: (...args) => store.recall(...args),
      clear: (owner) => store.clear(owner),
    };
    await expect(importFileMemories(root, failing)).rejects.toThrow('database unreachable');
    expect(await readdir(path.join(userDir('acme', 'alice'), 'a'))).toHaveLength(2);
    expect(await importFileMemories(root, failing)).toEqual({ notes: 2, users: 1, skipped: [] });
    expect(await texts(store, 'acme', 'alice', 'a')).toEqual(['00:00:00 note 2', '00:00:00 note 1', '00:00:00 note 0']);
  });

  it('leaves folders whose names were shortened with a hash on disk and names them', async () => {
    const longUser = 'u'.repeat(200);
    await writeOldNote(path.join(userDir('acme', longUser), 'a'), T0, 1, 'kept on disk');
    const longAssistant = path.join(userDir('acme', 'alice'), sanitiseId('a'.repeat(200)));
    await writeOldNote(longAssistant, T0, 1, 'also kept');
    await writeOldNote(path.join(userDir('acme', 'alice'), 'a'), T0, 1, 'imported');

    const store = new MapMemoryStore(now);
    const result = await importFileMemories(root, store);
    expect(result).toEqual({ notes: 1, users: 1, skipped: expect.arrayContaining([userDir('acme', longUser), longAssistant]) });
    expect(result.skipped).toHaveLength(2);
    expect(await readdir(longAssistant)).toHaveLength(1);
    expect(await readdir(path.join(userDir('acme', longUser), 'a'))).toHaveLength(1);
    expect(await readdir(userDir('acme', 'alice'))).toEqual([path.basename(longAssistant)]);
  });
});
