import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lchown, lstat, mkdir, readdir, realpath, utimes, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Beneath, insideOpenFolder, segments } from './beneath.js';
import { restoreWorkspace } from './workspace-archive.js';
import { WorkspaceError, WorkspaceHardLinkError, WorkspacePermissionError, WorkspaceQuotaError } from './workspace-errors.js';

export const DEFAULT_WORKSPACE_ROOT = '/data/workspaces/{tenant_id}/{user_id}';
export const DEFAULT_WORKSPACE_QUOTA_BYTES = 1024 ** 3;
/** Folders every workspace starts with. */
export const WORKSPACE_SUBDIRS = ['files', 'uploads', 'outputs'] as const;

export interface WorkspaceOptions {
  /** Root template; `{user_id}` (and `{tenant_id}`) become sanitised ids. Default {@link DEFAULT_WORKSPACE_ROOT}. */
  rootTemplate?: string;
  /** Bytes the workspace may hold, or a function asked at each write (a tenant's quota may change). Default 1 GiB. */
  quotaBytes?: number | (() => number);
  /** How long a walked usage figure is trusted before walking again (other writers: uploads, shell). Default 60 s. */
  usageTtlMs?: number;
  /**
   * The OS user that owns what the worker creates here: the sandbox's user when the worker runs
   * as root, so sandboxed commands can change the files the file tools wrote. Default: the worker's.
   */
  owner?: { uid: number; gid: number };
}

/**
 * Turns an id into one safe path segment, injectively: letters, digits, `_`, `-` and inner
 * dots stay, every other byte becomes `%XX` (so `..`, `/` and `%` can never appear raw).
 */
export function sanitiseId(id: string): string {
  if (!id) throw new WorkspacePermissionError('empty user id');
  let out = '';
  for (const byte of Buffer.from(id, 'utf8')) {
    const ch = String.fromCharCode(byte);
    const keep = /[A-Za-z0-9_-]/.test(ch) || (ch === '.' && out !== '');
    out += keep ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (out.endsWith('.')) out = `${out.slice(0, -1)}%2E`;
  return out.length > 128 ? `${out.slice(0, 100)}~${createHash('sha256').update(id).digest('hex').slice(0, 16)}` : out;
}

/** The absolute root directory of one user's workspace. */
export function workspaceRootFor(template: string, userId: string, tenantId?: string): string {
  let root = template.includes('{user_id}') ? template.replaceAll('{user_id}', sanitiseId(userId)) : path.join(template, sanitiseId(userId));
  if (root.includes('{tenant_id}')) root = root.replaceAll('{tenant_id}', sanitiseId(tenantId ?? 'default'));
  return path.resolve(root);
}

/**
 * Sets the folder's mtime to now: the archiver leaves a workspace in use alone, also one that is
 * only read. @returns false when the folder is gone (archived since it was opened).
 */
async function markUsed(root: string): Promise<boolean> {
  const now = new Date();
  return utimes(root, now, now).then(
    () => true,
    // Not ours to touch (another owner): still usable, only not marked.
    (err: NodeJS.ErrnoException) => err.code !== 'ENOENT' && err.code !== 'ENOTDIR',
  );
}

const isInside = (root: string, p: string) => p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);

/** The path as written, then each level of percent-decoding an attacker might count on. */
function decodings(userPath: string): string[] {
  const out = [userPath];
  let current = userPath;
  for (let i = 0; i < 4 && current.includes('%'); i++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      next = current.replace(/%([0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    }
    if (next === current) break;
    out.push(next);
    current = next;
  }
  return out;
}

/** A regular file of the workspace, open, and its size when it was opened. */
interface OpenFile {
  handle: FileHandle;
  size: number;
}

/**
 * Checks what was opened rather than the name: it must be a regular file with one link. A
 * second link to the same inode may lie anywhere on the volume (a hard link a command in the
 * workspace made to another tenant's file), and no path check can see it; checking the open
 * handle leaves no gap between the check and the read or write. Closes the handle when refused.
 * @throws WorkspaceError `is_directory`, `not_a_file`, or WorkspaceHardLinkError.
 */
async function checkedFile(handle: FileHandle, shown: string): Promise<OpenFile> {
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw new WorkspaceError('is_directory', `${shown}: is a directory`);
    if (!stat.isFile()) throw new WorkspaceError('not_a_file', `${shown}: not a regular file`);
    if (stat.nlink > 1) throw new WorkspaceHardLinkError(shown, stat.nlink);
    return { handle, size: stat.size };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** One entry of a folder: its name, its kind (symlinks not followed) and, for a file, its size. */
export interface WorkspaceEntry {
  name: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  size?: number;
}

/** The entries of an open folder, sorted by name. */
async function entriesOf(folder: FileHandle, folderPath: string): Promise<WorkspaceEntry[]> {
  const dirents = await readdir(insideOpenFolder(folder, folderPath), { withFileTypes: true });
  dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const entries: WorkspaceEntry[] = [];
  for (const d of dirents) {
    const type = d.isDirectory() ? 'dir' : d.isFile() ? 'file' : d.isSymbolicLink() ? 'symlink' : 'other';
    const size = type === 'file' ? ((await lstat(insideOpenFolder(folder, folderPath, d.name)).catch(() => null))?.size ?? 0) : undefined;
    entries.push({ name: d.name, type, ...(size === undefined ? {} : { size }) });
  }
  return entries;
}

/** Replaces the whole content of an open file; explicit offsets, as a read before moved its position. */
async function replaceContent(handle: FileHandle, data: Uint8Array): Promise<void> {
  await handle.truncate(0);
  for (let offset = 0; offset < data.byteLength; ) {
    const { bytesWritten } = await handle.write(data, offset, data.byteLength - offset, offset);
    offset += bytesWritten;
  }
}

/**
 * One user's file area: every path goes through {@link Workspace.resolve} (for a clear error
 * early), every open through {@link Beneath} (which no concurrent rename or symlink can steer
 * out of the workspace: the user's own shell commands run beside the file tools), every write
 * through the quota.
 */
export class Workspace {
  /** The workspace root as configured (absolute, not symlink-resolved). */
  readonly root: string;
  private readonly quota: () => number;
  private readonly usageTtlMs: number;
  private readonly owner?: { uid: number; gid: number };
  private realRoot?: Promise<string>;
  private resolvedRoot?: string;
  private usageCache?: { bytes: number; at: number };
  private writeChain: Promise<unknown> = Promise.resolve();

  /** Bytes the workspace may hold now. */
  get quotaBytes(): number {
    return this.quota();
  }

  constructor(userId: string, options: WorkspaceOptions & { tenantId?: string } = {}) {
    this.root = workspaceRootFor(options.rootTemplate ?? DEFAULT_WORKSPACE_ROOT, userId, options.tenantId);
    const quota = options.quotaBytes ?? DEFAULT_WORKSPACE_QUOTA_BYTES;
    this.quota = typeof quota === 'function' ? quota : () => quota;
    this.usageTtlMs = options.usageTtlMs ?? 60_000;
    this.owner = options.owner;
  }

  /**
   * Creates the root and `files/`, `uploads/`, `outputs/` on first use, or unpacks the
   * workspace's archive when it was archived; marks it used on every call.
   * @returns the root with symlinks resolved.
   * @throws WorkspaceError `workspace_restore_failed` when its archive cannot be unpacked.
   */
  async ensure(): Promise<string> {
    const opened = this.realRoot;
    if (opened) {
      const realRoot = await opened;
      if (await markUsed(this.root)) return realRoot;
      // Archived since this process opened it: open it again, from the archive.
      if (this.realRoot === opened) this.realRoot = undefined;
    }
    this.realRoot ??= this.open().catch((err: unknown) => {
      this.realRoot = undefined;
      throw err;
    });
    return this.realRoot;
  }

  private async open(): Promise<string> {
    await restoreWorkspace(this.root);
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    const realRoot = await realpath(this.root);
    const beneath = new Beneath(realRoot, [this.root]);
    for (const dir of WORKSPACE_SUBDIRS) await (await beneath.open([dir], { kind: 'dir' }, dir, (folder) => this.ownFolder(folder)).catch(() => null))?.close();
    // lchown: a subfolder a command replaced with a symlink must not give its target away.
    if (this.owner) for (const dir of [this.root, ...WORKSPACE_SUBDIRS.map((d) => path.join(this.root, d))]) await lchown(dir, this.owner.uid, this.owner.gid);
    await markUsed(this.root);
    this.usageCache = undefined;
    this.resolvedRoot = realRoot;
    return realRoot;
  }

  /**
   * Maps a path given by a user or model to an absolute path inside the workspace. Relative
   * paths start at the root; absolute paths must already lie inside it.
   * @throws WorkspacePermissionError for `..` escapes, absolute paths elsewhere, percent-encoded
   * escapes (any level), NUL bytes, and symlinks (or dangling symlinks) leading out.
   */
  async resolve(userPath: string): Promise<string> {
    const realRoot = await this.ensure();
    if (typeof userPath !== 'string') throw new WorkspacePermissionError('path must be a string');
    const rebase = (p: string) => {
      const abs = path.resolve(realRoot, p);
      return isInside(this.root, abs) && !isInside(realRoot, abs) ? path.join(realRoot, path.relative(this.root, abs)) : abs;
    };
    for (const variant of decodings(userPath)) {
      if (variant.includes('\0')) throw new WorkspacePermissionError('path contains a NUL byte');
      for (const spelling of [variant, variant.replaceAll('\\', '/')]) {
        if (!isInside(realRoot, rebase(spelling))) throw new WorkspacePermissionError(`${userPath}: outside the workspace (use paths relative to the workspace root, e.g. files/notes.md)`);
      }
    }
    const target = rebase(userPath);
    await this.assertNoSymlinkEscape(target, realRoot, userPath);
    return target;
  }

  /** The workspace-relative form of an absolute path inside it, with `/` separators. */
  relative(absPath: string): string {
    const base = this.resolvedRoot && isInside(this.resolvedRoot, absPath) ? this.resolvedRoot : this.root;
    return path.relative(base, absPath).split(path.sep).join('/') || '.';
  }

  private async assertNoSymlinkEscape(target: string, realRoot: string, shown: string): Promise<void> {
    for (let probe = target; ; probe = path.dirname(probe)) {
      try {
        await lstat(probe);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if ((code === 'ENOENT' || code === 'ENOTDIR') && probe !== realRoot) continue;
        throw err;
      }
      let real: string;
      try {
        real = await realpath(probe);
      } catch {
        throw new WorkspacePermissionError(`${shown}: passes through a broken symlink`);
      }
      if (!isInside(realRoot, real)) throw new WorkspacePermissionError(`${shown}: a symlink leads outside the workspace`);
      return;
    }
  }

  /**
   * Reads a file as UTF-8 text.
   * @throws WorkspaceError (not_found, is_directory, not_a_file, too_large, binary) or
   * WorkspacePermissionError (WorkspaceHardLinkError for a file with more than one hard link).
   */
  async readText(userPath: string, maxBytes = 10 * 1024 * 1024): Promise<{ path: string; text: string }> {
    const abs = await this.resolve(userPath);
    const file = await this.openFile(abs, userPath, 'read');
    if (!file) throw new WorkspaceError('not_found', `${userPath}: no such file`);
    try {
      if (file.size > maxBytes) throw new WorkspaceError('too_large', `${userPath}: ${file.size} bytes, more than the ${maxBytes}-byte read limit`);
      const buf = await file.handle.readFile();
      if (buf.subarray(0, 8192).includes(0)) throw new WorkspaceError('binary', `${userPath}: binary file`);
      return { path: abs, text: buf.toString('utf8') };
    } finally {
      await file.handle.close();
    }
  }

  /**
   * Replaces a text file's content with what `change` makes of the current one (null when the
   * file does not exist yet), within the quota and serialised with the workspace's other writes.
   * @returns the content before (null for a new file) and after, and the absolute path.
   * @throws WorkspaceQuotaError, WorkspacePermissionError (WorkspaceHardLinkError for a file with
   * more than one hard link), WorkspaceError (is_directory, not_a_file), or whatever `change` throws.
   */
  modifyText(userPath: string, change: (before: string | null) => string): Promise<{ path: string; before: string | null; after: string }> {
    return this.serialised(async () => {
      const abs = await this.resolve(userPath);
      const existing = await this.openFile(abs, userPath, 'write');
      try {
        const before = existing ? (await existing.handle.readFile()).toString('utf8') : null;
        const after = change(before);
        await this.writeChecked(abs, userPath, Buffer.from(after, 'utf8'), existing);
        return { path: abs, before, after };
      } finally {
        await existing?.handle.close();
      }
    });
  }

  /**
   * Writes bytes to a file (creating parent folders) within the quota.
   * @throws WorkspaceQuotaError, WorkspacePermissionError (WorkspaceHardLinkError for a file with
   * more than one hard link), or WorkspaceError (is_directory, not_a_file).
   */
  writeFile(userPath: string, data: string | Uint8Array): Promise<string> {
    return this.serialised(async () => {
      const abs = await this.resolve(userPath);
      const existing = await this.openFile(abs, userPath, 'write');
      try {
        await this.writeChecked(abs, userPath, typeof data === 'string' ? Buffer.from(data, 'utf8') : data, existing);
        return abs;
      } finally {
        await existing?.handle.close();
      }
    });
  }

  /** Replaces the content of `existing`, or creates the file when null, within the quota. */
  private async writeChecked(abs: string, shown: string, data: Uint8Array, existing: OpenFile | null): Promise<void> {
    const used = await this.usage();
    const delta = data.byteLength - (existing?.size ?? 0);
    const quotaBytes = this.quotaBytes;
    if (delta > 0 && used + delta > quotaBytes) throw new WorkspaceQuotaError(used, quotaBytes, delta);
    let file = existing;
    if (!file) {
      // Opened and checked again: a link may have been put at this name since it was looked at.
      file = await this.openFile(abs, shown, 'write', true);
      if (!file) throw new WorkspaceError('not_found', `${shown}: its folder was removed while writing`);
      if (this.owner) await file.handle.chown(this.owner.uid, this.owner.gid);
    }
    try {
      await replaceContent(file.handle, data);
    } finally {
      if (file !== existing) await file.handle.close();
    }
    if (this.usageCache) this.usageCache.bytes = Math.max(0, this.usageCache.bytes + delta);
  }

  /**
   * Opens a file of the workspace beneath its root (see {@link Beneath}) and checks it.
   * @param abs a path returned by {@link resolve}.
   * @param create create the file, and its missing folders, when it does not exist.
   * @returns null when there is no such file.
   */
  private async openFile(abs: string, shown: string, access: 'read' | 'write', create = false): Promise<OpenFile | null> {
    const flags = (access === 'read' ? constants.O_RDONLY : constants.O_RDWR) | (create ? constants.O_CREAT : 0) | constants.O_NONBLOCK;
    const handle = await (await this.beneath()).open(await this.names(abs), { kind: 'file', flags }, shown, create ? (folder) => this.ownFolder(folder) : undefined);
    return handle && checkedFile(handle, shown);
  }

  /** Gives a folder the file tools made (by its handle, so no link swapped in meanwhile is followed) to the workspace's owner. */
  private async ownFolder(folder: FileHandle): Promise<void> {
    if (this.owner) await folder.chown(this.owner.uid, this.owner.gid);
  }

  private async beneath(): Promise<Beneath> {
    return new Beneath(await this.ensure(), [this.root]);
  }

  /** The names of a path returned by {@link resolve}, from the root down. */
  private async names(abs: string): Promise<string[]> {
    return segments(path.relative(await this.ensure(), abs));
  }

  /**
   * What a path of the workspace is, looked at beneath the root.
   * @returns `file` with its size, `dir`, `other`, or null when there is nothing there.
   */
  async stat(userPath: string): Promise<{ path: string; type: 'file' | 'dir' | 'other'; size: number } | null> {
    const abs = await this.resolve(userPath);
    const handle = await (await this.beneath()).open(await this.names(abs), { kind: 'file', flags: constants.O_RDONLY | constants.O_NONBLOCK }, userPath).catch((err: unknown) => {
      if (err instanceof WorkspaceError && err.code === 'is_directory') return 'dir' as const;
      // A socket cannot be opened; it is there all the same.
      if ((err as NodeJS.ErrnoException).code === 'ENXIO') return 'other' as const;
      throw err;
    });
    if (handle === 'dir' || handle === 'other') return { path: abs, type: handle, size: 0 };
    if (!handle) return null;
    try {
      const stat = await handle.stat();
      return { path: abs, type: stat.isDirectory() ? 'dir' : stat.isFile() ? 'file' : 'other', size: stat.isFile() ? stat.size : 0 };
    } finally {
      await handle.close();
    }
  }

  /**
   * The entries of a folder of the workspace, by name, read through the open folder.
   * @throws WorkspaceError `not_found` or `not_a_directory`.
   */
  async list(userPath: string): Promise<{ path: string; entries: WorkspaceEntry[] }> {
    const abs = await this.resolve(userPath);
    const folder = await (await this.beneath()).open(await this.names(abs), { kind: 'dir' }, userPath);
    if (!folder) throw new WorkspaceError('not_found', `${userPath}: no such folder`);
    try {
      return { path: abs, entries: await entriesOf(folder, abs) };
    } finally {
      await folder.close();
    }
  }

  /** Bytes the workspace holds (file sizes, symlinks not followed), cached between walks. */
  async usage(): Promise<number> {
    if (this.usageCache && Date.now() - this.usageCache.at < this.usageTtlMs) return this.usageCache.bytes;
    const root = await this.ensure();
    let bytes = 0;
    for await (const entry of this.walk(root)) if (entry.type === 'file') bytes += entry.size;
    this.usageCache = { bytes, at: Date.now() };
    return bytes;
  }

  /** Forgets the cached usage, for callers that wrote around the workspace (shell, uploads). */
  invalidateUsage(): void {
    this.usageCache = undefined;
  }

  /**
   * Walks a folder inside the workspace depth-first, without following symlinks; each folder
   * is opened beneath the root and read through its descriptor.
   * @param absDir an absolute path returned by {@link resolve}.
   */
  async *walk(absDir: string, limit = 100_000): AsyncGenerator<{ path: string; type: WorkspaceEntry['type']; size: number }> {
    const beneath = await this.beneath();
    const stack = [absDir];
    let seen = 0;
    while (stack.length > 0) {
      const dir = stack.pop()!;
      const folder = await beneath.open(segments(path.relative(beneath.root, dir)), { kind: 'dir' }, this.relative(dir)).catch(() => null);
      if (!folder) continue;
      let entries: WorkspaceEntry[];
      try {
        entries = await entriesOf(folder, dir).catch(() => []);
      } finally {
        await folder.close();
      }
      const subdirs: string[] = [];
      for (const entry of entries) {
        if (++seen > limit) return;
        const full = path.join(dir, entry.name);
        if (entry.type === 'dir') subdirs.push(full);
        yield { path: full, type: entry.type, size: entry.size ?? 0 };
      }
      stack.push(...subdirs.reverse());
    }
  }

  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const run = this.writeChain.then(work, work);
    this.writeChain = run.catch(() => undefined);
    return run;
  }
}
