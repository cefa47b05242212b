import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sanitiseId } from '../workspace/workspace.js';

/** One remembered note. */
export interface MemoryNote {
  /** The note's file name without `.json`; sorts by creation time. */
  id: string;
  text: string;
  /** ISO 8601. */
  createdAt: string;
}

/**
 * Whose memories: the caller's tenant and user (the tenant is always part of the path), or a
 * bare user id (tests and single-user tools: `memories/{user_id}`).
 */
export type MemoryOwner = string | { tenantId?: string; userId: string };

export interface FileMemoryStoreOptions {
  /** Notes older than this are dropped (and deleted) when recalled. Default 90 (Req 34.5). */
  retentionDays?: number;
  /** Longest note accepted, in characters. Default 2000. */
  maxNoteChars?: number;
  /** The clock; tests pass a fake one. */
  now?: () => Date;
}

export const DEFAULT_MEMORY_RETENTION_DAYS = 90;
const DAY_MS = 24 * 60 * 60 * 1000;

/** A note that is empty or too long. */
export class MemoryNoteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MemoryNoteError';
  }
}

/**
 * Long-term notes per user and assistant (seed 002, Req 34), one JSON file per note under
 * `{storageRoot}/memories/{user_id}/{assistant_id}/` with sanitised ids. Each note is written
 * to a temporary name and renamed into place, so concurrent runs of one user never lose or
 * tear a note and readers never see a half-written one. `storageRoot` may contain
 * `{tenant_id}` to keep tenants apart.
 */
export class FileMemoryStore {
  private readonly retentionMs: number;
  private readonly maxNoteChars: number;
  private readonly now: () => Date;
  private sequence = 0;
  private readonly moved = new Set<string>();

  constructor(
    private readonly storageRoot: string,
    options: FileMemoryStoreOptions = {},
  ) {
    const days = options.retentionDays ?? DEFAULT_MEMORY_RETENTION_DAYS;
    if (!(days > 0)) throw new Error(`retentionDays must be positive, got ${days}`);
    this.retentionMs = days * DAY_MS;
    this.maxNoteChars = options.maxNoteChars ?? 2000;
    this.now = options.now ?? (() => new Date());
  }

  /**
   * The folder holding all of one user's memories: `{root}/tenants/{tenant_id}/memories/{user_id}`,
   * or `{root}/memories/{user_id}` when the root names `{tenant_id}` itself or no tenant is given.
   */
  userDir(owner: MemoryOwner): string {
    const { tenantId, userId } = typeof owner === 'string' ? { tenantId: undefined, userId: owner } : owner;
    if (this.storageRoot.includes('{tenant_id}')) {
      return path.resolve(this.storageRoot.replaceAll('{tenant_id}', sanitiseId(tenantId ?? 'default')), 'memories', sanitiseId(userId));
    }
    if (tenantId === undefined) return path.resolve(this.storageRoot, 'memories', sanitiseId(userId));
    return path.resolve(this.storageRoot, 'tenants', sanitiseId(tenantId), 'memories', sanitiseId(userId));
  }

  /**
   * Where the default tenant's notes were kept before the tenant was part of the path
   * (`{root}/memories/{user_id}`); moved to the new place on first use, so an upgrade loses none.
   */
  private async moveLegacy(owner: MemoryOwner): Promise<void> {
    if (typeof owner === 'string' || owner.tenantId !== 'default' || this.storageRoot.includes('{tenant_id}')) return;
    const legacy = path.resolve(this.storageRoot, 'memories', sanitiseId(owner.userId));
    if (this.moved.has(legacy)) return;
    this.moved.add(legacy);
    const dir = this.userDir(owner);
    if (!(await exists(legacy)) || (await exists(dir))) return;
    await mkdir(path.dirname(dir), { recursive: true, mode: 0o700 });
    await rename(legacy, dir).catch(() => undefined);
  }

  /** The folder holding one user's notes for one assistant. */
  assistantDir(owner: MemoryOwner, assistantId: string): string {
    return path.join(this.userDir(owner), sanitiseId(assistantId));
  }

  /**
   * Stores a note.
   * @returns the stored note.
   * @throws MemoryNoteError when the note is empty or longer than `maxNoteChars`.
   */
  async add(owner: MemoryOwner, assistantId: string, note: string): Promise<MemoryNote> {
    const text = note.trim();
    if (!text) throw new MemoryNoteError('The note is empty');
    if (text.length > this.maxNoteChars) throw new MemoryNoteError(`The note has ${text.length} characters; at most ${this.maxNoteChars} are kept. Shorten it.`);
    await this.moveLegacy(owner);
    const dir = this.assistantDir(owner, assistantId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const created = this.now();
    // Time first so names sort by age; the sequence orders notes of one millisecond.
    const id = `${String(created.getTime()).padStart(15, '0')}-${String(++this.sequence % 1e6).padStart(6, '0')}-${randomBytes(4).toString('hex')}`;
    const stored: MemoryNote = { id, text, createdAt: created.toISOString() };
    const tmp = path.join(dir, `.${id}.tmp`);
    await writeFile(tmp, JSON.stringify(stored), { mode: 0o600, flag: 'wx' });
    await rename(tmp, path.join(dir, `${id}.json`));
    return stored;
  }

  /**
   * One user's notes for one assistant, newest first. Notes past the retention period are
   * deleted rather than returned.
   */
  async recall(owner: MemoryOwner, assistantId: string, limit = 20): Promise<MemoryNote[]> {
    await this.moveLegacy(owner);
    const dir = this.assistantDir(owner, assistantId);
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => /^\d{15}-.*\.json$/.test(n)).sort().reverse();
    const cutoff = this.now().getTime() - this.retentionMs;
    const expired = names.filter((n) => Number(n.slice(0, 15)) < cutoff);
    await Promise.all(expired.map((n) => unlink(path.join(dir, n)).catch(() => undefined)));
    const notes: MemoryNote[] = [];
    for (const name of names) {
      if (notes.length >= limit) break;
      if (Number(name.slice(0, 15)) < cutoff) continue;
      const note = await readFile(path.join(dir, name), 'utf8').then(parseNote, () => null);
      if (note) notes.push(note);
    }
    return notes;
  }

  /** Deletes every memory of the user, for all assistants (Req 34.4). */
  async clear(owner: MemoryOwner): Promise<void> {
    await this.moveLegacy(owner);
    await rm(this.userDir(owner), { recursive: true, force: true });
  }

  /** Deletes the user's memories for one assistant. */
  async clearAssistant(owner: MemoryOwner, assistantId: string): Promise<void> {
    await this.moveLegacy(owner);
    await rm(this.assistantDir(owner, assistantId), { recursive: true, force: true });
  }
}

async function exists(dir: string): Promise<boolean> {
  return stat(dir).then(
    () => true,
    () => false,
  );
}

function parseNote(json: string): MemoryNote | null {
  try {
    const value = JSON.parse(json) as Partial<MemoryNote>;
    return typeof value.id === 'string' && typeof value.text === 'string' && typeof value.createdAt === 'string' ? { id: value.id, text: value.text, createdAt: value.createdAt } : null;
  } catch {
    return null;
  }
}
