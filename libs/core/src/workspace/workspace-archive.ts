import { randomUUID } from 'node:crypto';
import { lstat, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { create, extract } from 'tar';
import { WorkspaceError } from './workspace-errors.js';

/** A workspace folder as the archiver sees it. */
export interface WorkspaceFolder {
  path: string;
  /** The newest mtime of the folder and anything inside it (symlinks not followed). */
  lastModified: Date;
  /** Bytes of the files inside. */
  bytes: number;
}

/** The archive a workspace folder is packed into, beside it. */
const archivePathFor = (folder: string): string => `${folder}.tar.gz`;

const isMissing = (err: unknown) => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');

/**
 * When a workspace was last changed and how large it is: the newest mtime of the folder itself
 * (each use touches it) and of everything inside.
 * @returns null when the folder is gone.
 */
export async function inspectWorkspace(folder: string): Promise<WorkspaceFolder | null> {
  const top = await lstat(folder).catch((err: unknown) => {
    if (isMissing(err)) return null;
    throw err;
  });
  if (!top?.isDirectory()) return null;
  let newest = top.mtimeMs;
  let bytes = 0;
  const stack = [folder];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(dir, entry.name);
      const stat = await lstat(full).catch(() => null);
      if (!stat) continue;
      newest = Math.max(newest, stat.mtimeMs);
      if (stat.isDirectory()) stack.push(full);
      else if (stat.isFile()) bytes += stat.size;
    }
  }
  return { path: folder, lastModified: new Date(newest), bytes };
}

/**
 * Packs a workspace folder into `<folder>.tar.gz` beside it, then removes the folder. The
 * archive is written under a temporary name and renamed into place, so a crash leaves no half
 * archive; a folder changed since `seen` was taken is left as it is.
 * @returns whether the folder was archived.
 */
export async function archiveWorkspace(seen: WorkspaceFolder): Promise<boolean> {
  const parent = path.dirname(seen.path);
  const name = path.basename(seen.path);
  const temporary = path.join(parent, `.${name}.${randomUUID().slice(0, 8)}.tar.gz.tmp`);
  try {
    await create({ gzip: true, file: temporary, cwd: parent, portable: true }, [name]);
    const now = await inspectWorkspace(seen.path);
    // Used (or removed) while it was being packed: keep it.
    if (!now || now.lastModified.getTime() !== seen.lastModified.getTime()) return false;
    await rename(temporary, archivePathFor(seen.path));
  } finally {
    await rm(temporary, { force: true });
  }
  await rm(seen.path, { recursive: true, force: true });
  return true;
}

/**
 * Unpacks `<root>.tar.gz` into `root` when the folder is missing, then removes the archive.
 * Unpacks beside it under a temporary name and renames into place, so a crash leaves no half
 * workspace; when another process restores the same workspace at once, one rename wins.
 * @returns whether there was an archive to restore.
 * @throws WorkspaceError `workspace_restore_failed` when the archive cannot be read.
 */
export async function restoreWorkspace(root: string): Promise<boolean> {
  const archive = archivePathFor(root);
  if (!(await lstat(archive).catch(() => null))?.isFile()) return false;
  const parent = path.dirname(root);
  const name = path.basename(root);
  const temporary = await mkdtemp(path.join(parent, `.${name}.restoring-`));
  try {
    await extract({ file: archive, cwd: temporary, strict: true }, [name]);
    await rename(path.join(temporary, name), root);
  } catch (err) {
    // Another process restored it first (and may have removed the archive already).
    if (await lstat(root).then((s) => s.isDirectory(), () => false)) return true;
    throw new WorkspaceError('workspace_restore_failed', `The archived workspace ${archive} could not be restored: ${(err as Error).message}`);
  } finally {
    await rm(temporary, { recursive: true, force: true });
  }
  await rm(archive, { force: true });
  return true;
}
