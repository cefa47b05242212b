import { randomBytes } from 'node:crypto';
import { readdir, readFile, rename, rm, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { sanitiseId } from '../workspace/workspace.js';
import { MemoryNoteError, type MemoryOwner, type MemoryStore } from './memory-store.js';

/** What one import did. */
export interface FileMemoryImportResult {
  /** Notes stored in the target. */
  notes: number;
  /** Users' folders imported. */
  users: number;
  /** Folders left on disk: their names were shortened with a hash and do not give the id back. */
  skipped: string[];
}

/**
 * Moves the notes that earlier versions kept on disk into `target`, deleting each file once
 * it is stored: one JSON file per note under `{storageRoot}/tenants/{tenant_id}/memories/{user_id}/{assistant_id}/`,
 * or `{storageRoot}/memories/{user_id}/{assistant_id}/` (tenant `default`, the layout before the
 * tenant was in the path). Each user's folder is renamed aside first, so processes sharing the
 * folder never import it twice. Notes keep their time, so retention still counts from it.
 * @throws the target's error; what was not stored yet is back in place for the next try.
 */
export async function importFileMemories(storageRoot: string, target: MemoryStore): Promise<FileMemoryImportResult> {
  const result: FileMemoryImportResult = { notes: 0, users: 0, skipped: [] };
  const places = [{ dir: path.join(storageRoot, 'memories'), tenantId: 'default' as string | null }];
  for (const name of await folders(path.join(storageRoot, 'tenants'))) {
    places.push({ dir: path.join(storageRoot, 'tenants', name, 'memories'), tenantId: idOf(name) });
  }
  for (const { dir, tenantId } of places) {
    for (const name of await folders(dir)) {
      // Claims of other processes start with a dot, which no sanitised id does.
      if (name.startsWith('.')) continue;
      const userDir = path.join(dir, name);
      const userId = idOf(name);
      if (tenantId === null || userId === null) {
        result.skipped.push(userDir);
        continue;
      }
      const claimed = path.join(dir, `.importing-${randomBytes(6).toString('hex')}`);
      if (!(await claim(userDir, claimed))) continue;
      try {
        result.notes += await importUser({ tenantId, userId }, claimed, target, (assistant) => result.skipped.push(path.join(userDir, assistant)));
      } finally {
        // Empty now, unless a note could not be stored or an assistant's id not read back.
        await rmdir(claimed).catch(() => rename(claimed, userDir));
      }
      result.users++;
    }
  }
  return result;
}

async function importUser(owner: MemoryOwner, userDir: string, target: MemoryStore, skip: (assistantFolder: string) => void): Promise<number> {
  let imported = 0;
  for (const name of await folders(userDir)) {
    const assistantId = idOf(name);
    if (assistantId === null) {
      skip(name);
      continue;
    }
    const dir = path.join(userDir, name);
    // Oldest first (the file names start with the time), so notes of one millisecond keep their order.
    for (const file of (await readdir(dir)).sort()) {
      const note = /^\d{15}-.*\.json$/.test(file) ? parseNote(await readFile(path.join(dir, file), 'utf8')) : null;
      if (note) {
        try {
          await target.add(owner, assistantId, note.text, note.createdAt);
          imported++;
        } catch (err) {
          if (!(err instanceof MemoryNoteError)) throw err;
        }
      }
      // Unreadable notes, half-written temporary files and notes the limits refuse go too.
      await unlink(path.join(dir, file));
    }
    await rm(dir, { recursive: true, force: true });
  }
  return imported;
}

/** Renames `dir` to `to`; false when another process renamed it first. */
async function claim(dir: string, to: string): Promise<boolean> {
  try {
    await rename(dir, to);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** The id a folder name was made from by sanitiseId, or null when the name was shortened. */
function idOf(name: string): string | null {
  const id = Buffer.from(name.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');
  return id && sanitiseId(id) === name ? id : null;
}

async function folders(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => e.name);
}

function parseNote(json: string): { text: string; createdAt: Date } | null {
  try {
    const value = JSON.parse(json) as { text?: unknown; createdAt?: unknown };
    const createdAt = new Date(String(value.createdAt));
    return typeof value.text === 'string' && !Number.isNaN(createdAt.getTime()) ? { text: value.text, createdAt } : null;
  } catch {
    return null;
  }
}
