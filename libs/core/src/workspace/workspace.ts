import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, realpath, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { restoreWorkspace } from './workspace-archive.js';
import { WorkspaceError, WorkspacePermissionError, WorkspaceQuotaError } from './workspace-errors.js';

export const DEFAULT_WORKSPACE_ROOT = '/data/workspaces/{tenant_id}/{user_id}';
export const DEFAULT_WORKSPACE_QUOTA_BYTES = 1024 ** 3;
/** Folders every workspace starts with (seed 002, Req 33.2). */
export const WORKSPACE_SUBDIRS = ['files', 'uploads', 'outputs'] as const;

export interface WorkspaceOptions {
  /** Root template; `{user_id}` (and `{tenant_id}`) become sanitised ids. Default {@link DEFAULT_WORKSPACE_ROOT}. */
  rootTemplate?: string;
  /** Bytes the workspace may hold, or a function asked at each write (a tenant's quota may change). Default 1 GiB. */
  quotaBytes?: number | (() => number);
  /** How long a walked usage figure is trusted before walking again (other writers: uploads, shell). Default 60 s. */
  usageTtlMs?: number;
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

/**
 * One user's file area: every path goes through {@link Workspace.resolve}, every write through
 * the quota. The checks run before each operation; a process that can create symlinks in the
 * workspace concurrently (the opt-in shell tool) could race them, which is why the shell tool
 * is off by default and is no sandbox of its own.
 */
export class Workspace {
  /** The workspace root as configured (absolute, not symlink-resolved). */
  readonly root: string;
  private readonly quota: () => number;
  private readonly usageTtlMs: number;
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
    for (const dir of WORKSPACE_SUBDIRS) await mkdir(path.join(this.root, dir), { recursive: true, mode: 0o700 });
    await markUsed(this.root);
    this.usageCache = undefined;
    this.resolvedRoot = await realpath(this.root);
    return this.resolvedRoot;
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
   * @throws WorkspaceError (not_found, is_directory, too_large, binary) or WorkspacePermissionError.
   */
  async readText(userPath: string, maxBytes = 10 * 1024 * 1024): Promise<{ path: string; text: string }> {
    const abs = await this.resolve(userPath);
    const stat = await lstat(abs).catch(() => null);
    if (!stat) throw new WorkspaceError('not_found', `${userPath}: no such file`);
    if (stat.isDirectory()) throw new WorkspaceError('is_directory', `${userPath}: is a directory`);
    if (stat.size > maxBytes) throw new WorkspaceError('too_large', `${userPath}: ${stat.size} bytes, more than the ${maxBytes}-byte read limit`);
    const buf = await readFile(abs);
    if (buf.subarray(0, 8192).includes(0)) throw new WorkspaceError('binary', `${userPath}: binary file`);
    return { path: abs, text: buf.toString('utf8') };
  }

  /**
   * Replaces a text file's content with what `change` makes of the current one (null when the
   * file does not exist yet), within the quota and serialised with the workspace's other writes.
   * @returns the content before (null for a new file) and after, and the absolute path.
   * @throws WorkspaceQuotaError, WorkspacePermissionError, or whatever `change` throws.
   */
  modifyText(userPath: string, change: (before: string | null) => string): Promise<{ path: string; before: string | null; after: string }> {
    return this.serialised(async () => {
      const abs = await this.resolve(userPath);
      const stat = await lstat(abs).catch(() => null);
      if (stat?.isDirectory()) throw new WorkspaceError('is_directory', `${userPath}: is a directory`);
      const before = stat ? (await readFile(abs)).toString('utf8') : null;
      const after = change(before);
      await this.writeChecked(abs, Buffer.from(after, 'utf8'), stat?.isFile() ? stat.size : 0);
      return { path: abs, before, after };
    });
  }

  /**
   * Writes bytes to a file (creating parent folders) within the quota.
   * @throws WorkspaceQuotaError or WorkspacePermissionError.
   */
  writeFile(userPath: string, data: string | Uint8Array): Promise<string> {
    return this.serialised(async () => {
      const abs = await this.resolve(userPath);
      const stat = await lstat(abs).catch(() => null);
      if (stat?.isDirectory()) throw new WorkspaceError('is_directory', `${userPath}: is a directory`);
      await this.writeChecked(abs, typeof data === 'string' ? Buffer.from(data, 'utf8') : data, stat?.isFile() ? stat.size : 0);
      return abs;
    });
  }

  private async writeChecked(abs: string, data: Uint8Array, previousSize: number): Promise<void> {
    const used = await this.usage();
    const delta = data.byteLength - previousSize;
    const quotaBytes = this.quotaBytes;
    if (delta > 0 && used + delta > quotaBytes) throw new WorkspaceQuotaError(used, quotaBytes, delta);
    await mkdir(path.dirname(abs), { recursive: true, mode: 0o700 });
    await writeFile(abs, data);
    if (this.usageCache) this.usageCache.bytes = Math.max(0, this.usageCache.bytes + delta);
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
   * Walks a folder inside the workspace depth-first, without following symlinks.
   * @param absDir an absolute path returned by {@link resolve}.
   */
  async *walk(absDir: string, limit = 100_000): AsyncGenerator<{ path: string; type: 'file' | 'dir' | 'symlink' | 'other'; size: number }> {
    const stack = [absDir];
    let seen = 0;
    while (stack.length > 0) {
      const dir = stack.pop()!;
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const subdirs: string[] = [];
      for (const entry of entries) {
        if (++seen > limit) return;
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          subdirs.push(full);
          yield { path: full, type: 'dir', size: 0 };
        } else if (entry.isFile()) {
          const size = (await lstat(full).catch(() => null))?.size ?? 0;
          yield { path: full, type: 'file', size };
        } else {
          yield { path: full, type: entry.isSymbolicLink() ? 'symlink' : 'other', size: 0 };
        }
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
