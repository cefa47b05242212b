import { constants, existsSync } from 'node:fs';
import { mkdir, open, readlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { WorkspaceError, WorkspacePermissionError } from './workspace-errors.js';

/** What {@link Beneath.open} opens at the end of the path. */
export type BeneathTarget =
  /** A file, with these `open(2)` flags (O_NOFOLLOW is added) and, when it creates one, this mode. */
  | { kind: 'file'; flags: number; mode?: number }
  /** A folder, read-only, for listing and as the parent of what comes next. */
  | { kind: 'dir' };

/** Called with each folder {@link Beneath.open} made on the way, open, before anything goes into it. */
export type CreatedFolder = (folder: FileHandle) => Promise<void>;

/** How many symlinks one open follows before it gives up, as the kernel's own limit. */
const MAX_LINKS = 40;

/**
 * Where a name inside an open folder is reached: through the folder's descriptor, so the
 * kernel looks the name up in the folder that was opened, whatever was renamed or swapped for
 * it since. Linux's `/proc/self/fd/N` is a link to the open folder itself, not to its path.
 */
const procFd = existsSync('/proc/self/fd') ? (handle: FileHandle) => `/proc/self/fd/${handle.fd}` : undefined;

/** One step of a walk: a folder opened so far and the path that names it (for systems without `/proc`). */
interface Step {
  handle: FileHandle;
  path: string;
}

const where = (step: Step, name?: string): string => {
  const base = procFd ? procFd(step.handle) : step.path;
  return name === undefined ? base : `${base}/${name}`;
};

const isInside = (root: string, p: string) => p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);

/** A path's names, without `.` and empty ones; `..` is refused by the callers' normalising first. */
export const segments = (relative: string): string[] => relative.split(/[\\/]+/).filter((name) => name !== '' && name !== '.');

/**
 * Opens paths beneath one folder so that no name can lead out of it, whatever other processes
 * do to the folder meanwhile: every name is looked up in the folder opened just before it (by
 * descriptor), with O_NOFOLLOW, so a name swapped for a symlink between a check and an open
 * (`renameat2(RENAME_EXCHANGE)` in a loop) is seen as a link, never followed by the kernel. A
 * link is read and followed here only when its target lies beneath the folder, from the folder
 * again. The file tools run as root; this is what keeps a user's own processes from steering
 * them elsewhere. Where `/proc/self/fd` is missing (not Linux) each name is still opened with
 * O_NOFOLLOW, but through its path, which a concurrent rename can race.
 */
export class Beneath {
  /**
   * @param root the folder, symlinks resolved (the caller's operator-chosen workspace root).
   * @param aliases absolute spellings of `root` an absolute link target may use (the root as
   * configured, before symlinks were resolved).
   */
  constructor(
    readonly root: string,
    private readonly aliases: readonly string[] = [],
  ) {}

  /**
   * Opens `names` (a path already normalised, relative to the root) beneath the root.
   * @param created when given, missing folders on the way (and a missing folder asked for) are
   * made (mode 0700) and handed to it.
   * @returns the open file or folder, or null when a name on the way does not exist (or is not a folder).
   * @throws WorkspacePermissionError when a symlink leads outside the root, or too many symlinks;
   * WorkspaceError `is_directory` when a file was asked for and a folder is there; `not_a_directory`
   * when a folder was asked for and something else is there.
   */
  async open(names: readonly string[], target: BeneathTarget, shown: string, created?: CreatedFolder): Promise<FileHandle | null> {
    let path_ = [...names];
    for (let links = 0; links <= MAX_LINKS; links++) {
      const outcome = await this.walk(path_, target, shown, created);
      if (outcome === null || 'fd' in outcome) return outcome;
      path_ = this.follow(path_.slice(0, outcome.index), outcome.link, path_.slice(outcome.index + 1), shown);
    }
    throw new WorkspacePermissionError(`${shown}: too many levels of symbolic links`);
  }

  /** One pass from the root: the handle, null for a missing name, or the first symlink met. */
  private async walk(names: string[], target: BeneathTarget, shown: string, created?: CreatedFolder): Promise<FileHandle | null | { index: number; link: string }> {
    let step: Step = { handle: await open(this.root, constants.O_RDONLY | constants.O_DIRECTORY), path: this.root };
    try {
      for (let i = 0; i < names.length; i++) {
        const last = i === names.length - 1;
        const at = where(step, names[i]);
        const wantFile = last && target.kind === 'file';
        const flags = (wantFile ? target.flags : constants.O_RDONLY | constants.O_DIRECTORY) | constants.O_NOFOLLOW;
        let next: FileHandle;
        try {
          next = await open(at, flags, wantFile ? (target.mode ?? 0o666) : undefined);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'EMLINK') {
            const link = await readlink(at).catch(() => undefined);
            if (link !== undefined) return { index: i, link };
            if (last && target.kind === 'dir') throw new WorkspaceError('not_a_directory', `${shown}: not a folder`);
            return null;
          }
          if (code === 'EISDIR') throw new WorkspaceError('is_directory', `${shown}: is a directory`);
          if (code !== 'ENOENT') throw err;
          if (!created || wantFile) return null;
          next = await this.makeFolder(at, created);
        }
        await step.handle.close();
        step = { handle: next, path: path.join(step.path, names[i]!) };
      }
      // The root itself: a folder.
      if (names.length === 0 && target.kind === 'file') throw new WorkspaceError('is_directory', `${shown}: is a directory`);
      return step.handle;
    } catch (err) {
      await step.handle.close();
      throw err;
    }
  }

  /** Makes a missing folder and opens it (O_NOFOLLOW: a link put there meanwhile is refused by the next pass). */
  private async makeFolder(at: string, created: CreatedFolder): Promise<FileHandle> {
    let made = true;
    await mkdir(at, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
      made = false;
    });
    const handle = await open(at, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    if (made) {
      try {
        await created(handle);
      } catch (err) {
        await handle.close();
        throw err;
      }
    }
    return handle;
  }

  /** The names a symlink at `before`/link/`after` leads to, beneath the root. */
  private follow(before: string[], link: string, after: string[], shown: string): string[] {
    const outside = () => new WorkspacePermissionError(`${shown}: a symlink leads outside the workspace`);
    if (path.isAbsolute(link)) {
      const target = path.resolve(link);
      const base = [this.root, ...this.aliases].find((root) => isInside(root, target));
      if (base === undefined) throw outside();
      return [...segments(path.relative(base, target)), ...after];
    }
    const names = [...before];
    for (const name of segments(link)) {
      if (name !== '..') names.push(name);
      else if (names.pop() === undefined) throw outside();
    }
    return [...names, ...after];
  }
}

/** Where the entries of a folder opened by {@link Beneath.open} are read, and `name` inside it is looked at without following it. */
export function insideOpenFolder(folder: FileHandle, folderPath: string, name?: string): string {
  return where({ handle: folder, path: folderPath }, name);
}
