import { createHash } from 'node:crypto';
import { lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/** How processes a user causes are confined: `bwrap` (bubblewrap namespaces) or `none` (the worker's own user and view). */
export type SandboxKind = 'bwrap' | 'none';

/** Limits of one sandboxed command or server; exceeding one ends it (or fails the call that hit it). */
export interface SandboxLimits {
  /** Private writable memory of each process (RLIMIT_DATA). */
  memoryBytes: number;
  /** Processes and threads inside one sandbox (RLIMIT_NPROC, counted per sandbox: each has its own user namespace). */
  processes: number;
  /** CPU seconds of each process (RLIMIT_CPU). */
  cpuSeconds: number;
  /** Largest file a process may write (RLIMIT_FSIZE). */
  fileBytes: number;
  /** Open files of each process (RLIMIT_NOFILE). */
  openFiles: number;
  /** Size of the sandbox's private /tmp and /dev/shm (tmpfs, in memory). */
  tmpBytes: number;
}

/** The first OS user id of sandboxes started by a root worker; ids above it are not expected to be anyone's. */
export const DEFAULT_SANDBOX_UID_BASE = 200_000;

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  memoryBytes: 512 * 1024 ** 2,
  processes: 64,
  cpuSeconds: 120,
  fileBytes: 256 * 1024 ** 2,
  openFiles: 256,
  tmpBytes: 64 * 1024 ** 2,
};

/** What to run in a sandbox. */
export interface SandboxedCommand {
  /** The program: an absolute path, or a name looked up on the sandbox's PATH. */
  command: string;
  args: readonly string[];
  /** The complete environment inside; nothing of the worker's is added. */
  env: Record<string, string>;
  /** The caller's workspace (real path): the only folder of the host the command may write. */
  workspace: string;
  /** Working folder inside the sandbox; default the workspace. */
  cwd?: string;
  /** Host folders the command needs to read (its install folder, its dependencies): visible read-only at the same path. */
  readOnly?: readonly string[];
  /** Host folders the operator lets one of its servers write besides the workspace. */
  readWrite?: readonly string[];
  /** A network namespace of its own with outbound access (never the host's loopback); default none at all. */
  network?: boolean;
  limits?: Partial<SandboxLimits>;
  /** The OS user it runs as when the worker runs as root (see {@link BwrapSandbox.userFor}); default the first of the range. */
  user?: { uid: number; gid: number };
}

/** How to start a sandboxed command with `child_process.spawn`. */
export interface SpawnPlan {
  file: string;
  args: string[];
  /** The environment of the started process itself (for bwrap: empty, so the sandbox's /proc/1/environ holds nothing). */
  env: Record<string, string>;
  cwd: string;
  /** Descriptors the started process inherits as fd 3, 4, …; close them with {@link SpawnPlan.release} once spawned. */
  fds: number[];
  /** The OS user and group to start it as (set when the worker runs as root), else undefined. */
  uid?: number;
  gid?: number;
  /** Closes the descriptors opened for the plan. Idempotent. */
  release(): void;
}

/** Where processes a user causes are started. */
export interface Sandbox {
  readonly kind: SandboxKind;
  /** The OS user a caller's commands run as, when the sandbox chooses one (a root worker). */
  userFor?(tenantId: string, userId: string): { uid: number; gid: number } | undefined;
  /** The spawn for `command`; the caller spawns it `detached` (its own process group) and kills that group to end it. */
  plan(command: SandboxedCommand): SpawnPlan;
}

/** No confinement: the command runs as the worker's OS user and sees what the worker sees. */
export class NoSandbox implements Sandbox {
  readonly kind = 'none';

  plan(command: SandboxedCommand): SpawnPlan {
    return { file: command.command, args: [...command.args], env: command.env, cwd: command.cwd ?? command.workspace, fds: [], release: () => undefined };
  }
}

export interface BwrapSandboxOptions {
  /** The bubblewrap binary. Default `bwrap` on the worker's PATH. */
  bwrap?: string;
  /** The pasta binary (Debian's `passt`) giving networked servers a namespace of their own. Absent: such servers are refused. */
  pasta?: string;
  /** The prlimit binary (util-linux) that applies the limits inside the sandbox. Default /usr/bin/prlimit. */
  prlimit?: string;
  /** The setpriv binary (util-linux) that drops a root worker's sandbox to its unprivileged user. Default /usr/bin/setpriv. */
  setpriv?: string;
  limits?: Partial<SandboxLimits>;
  /** When the worker runs as root: the first of the 65,536 OS user ids its sandboxes run as. Default {@link DEFAULT_SANDBOX_UID_BASE}. */
  uid?: number;
  /** The host's system folders, tested for existence; default {@link SYSTEM_DIRS}. */
  systemDirs?: readonly string[];
}

/** The system's runtime, visible read-only: programs, libraries and the little of /etc they need. */
export const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt/node'];
/** Files of /etc a program reads to run (names, libraries, certificates, time zone); nothing secret. */
const ETC_FILES = [
  '/etc/passwd',
  '/etc/group',
  '/etc/nsswitch.conf',
  '/etc/hosts',
  '/etc/host.conf',
  '/etc/resolv.conf',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/timezone',
  '/etc/alternatives',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/mime.types',
  '/etc/os-release',
];

/**
 * Bubblewrap: each command in namespaces of its own (mount, PID, IPC, UTS, cgroup and network;
 * a user namespace too when the worker is not root), as an unprivileged user, with no new
 * privileges and no capabilities. It sees the
 * system's runtime read-only, the folders it is given (read-only unless it is the workspace),
 * a private /tmp, its own /proc; no other process, no other file of the host, and no network
 * unless granted (then through pasta, which never forwards to the host's loopback). Limits
 * apply per process through prlimit, and the process count per sandbox. When the command ends
 * or its group is killed, bubblewrap's init dies and the kernel ends everything inside.
 */
export class BwrapSandbox implements Sandbox {
  readonly kind = 'bwrap';
  private readonly bwrap: string;
  private readonly prlimit: string;
  private readonly limits: SandboxLimits;
  private readonly system: string[];
  private readonly setpriv: string;
  private readonly root = typeof process.getuid === 'function' && process.getuid() === 0;

  constructor(private readonly options: BwrapSandboxOptions = {}) {
    this.bwrap = options.bwrap ?? 'bwrap';
    this.prlimit = options.prlimit ?? '/usr/bin/prlimit';
    this.setpriv = options.setpriv ?? '/usr/bin/setpriv';
    this.limits = { ...DEFAULT_SANDBOX_LIMITS, ...options.limits };
    this.system = systemMounts(options.systemDirs ?? SYSTEM_DIRS);
  }

  /**
   * The OS user a caller's sandboxes run as when the worker runs as root: one of 65,536 ids from
   * the base, by a hash of tenant and user, so one user's runaway processes count against that
   * user's process limit alone. Undefined when the worker is not root (its own user is used).
   */
  userFor(tenantId: string, userId: string): { uid: number; gid: number } | undefined {
    if (!this.root) return undefined;
    const uid = (this.options.uid ?? DEFAULT_SANDBOX_UID_BASE) + (createHash('sha256').update(`${tenantId}\0${userId}`).digest().readUInt16BE(0));
    return { uid, gid: uid };
  }

  plan(command: SandboxedCommand): SpawnPlan {
    if (command.network && !this.options.pasta) throw new SandboxError('network_unavailable', "this worker has no pasta (Debian's passt package), so it cannot give a sandboxed server a network of its own");
    const limits = { ...this.limits, ...command.limits };
    const user = command.user ?? (this.root ? { uid: this.options.uid ?? DEFAULT_SANDBOX_UID_BASE, gid: this.options.uid ?? DEFAULT_SANDBOX_UID_BASE } : undefined);
    const namespaces = this.root
      ? // Root sets up the namespaces with its own rights (so no folder above a workspace needs
        // opening to anyone), and setpriv then drops to the caller's unprivileged user.
        ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', ...(command.network ? [] : ['--unshare-net']), '--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID']
      : // A user namespace of its own: the process count is the sandbox's alone.
        ['--unshare-all', ...(command.network ? ['--share-net'] : []), '--cap-drop', 'ALL'];
    const drop = this.root && user ? [this.setpriv, `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--no-new-privs', '--'] : [];
    const args = [
      '--die-with-parent',
      '--new-session',
      ...namespaces,
      '--hostname',
      'sandbox',
      ...this.system,
      // Made before the files in it: bubblewrap would make it for the first file as root's alone.
      '--dir',
      '/etc',
      ...ETC_FILES.flatMap((file) => ['--ro-bind-try', file, file]),
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      // Writable by the sandbox's user, sticky, and small: it lives in memory.
      '--perms',
      '1777',
      '--size',
      String(limits.tmpBytes),
      '--tmpfs',
      '/tmp',
      '--perms',
      '1777',
      '--size',
      String(limits.tmpBytes),
      '--tmpfs',
      '/dev/shm',
      ...mountPoints([...(command.readOnly ?? []), ...(command.readWrite ?? []), command.workspace]),
      ...[...new Set(command.readOnly ?? [])].flatMap((dir) => ['--ro-bind', dir, dir]),
      ...[...new Set(command.readWrite ?? [])].flatMap((dir) => ['--bind', dir, dir]),
      '--bind',
      command.workspace,
      command.workspace,
      '--chdir',
      command.cwd ?? command.workspace,
      '--clearenv',
      ...Object.entries(command.env).flatMap(([name, value]) => ['--setenv', name, value]),
      '--',
      ...drop,
      this.prlimit,
      `--nproc=${limits.processes}`,
      `--data=${limits.memoryBytes}`,
      `--cpu=${limits.cpuSeconds}`,
      `--fsize=${limits.fileBytes}`,
      `--nofile=${limits.openFiles}`,
      '--',
      command.command,
      ...command.args,
    ];
    // pasta puts bubblewrap in a network namespace whose only way out is pasta's own
    // translation to the host's sockets; --no-map-gw keeps the host's loopback unreachable.
    const [file, fileArgs] = command.network ? [this.options.pasta!, ['--quiet', '--config-net', '--no-map-gw', '--', this.bwrap, ...args]] : [this.bwrap, args];
    return { file, args: fileArgs, env: {}, cwd: '/', fds: [], release: () => undefined };
  }
}

export type SandboxErrorCode = 'network_unavailable' | 'folder_unavailable' | 'refused';

/** A command the sandbox cannot start as asked; nothing ran. */
export class SandboxError extends Error {
  constructor(
    readonly code: SandboxErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SandboxError';
  }
}

/**
 * `--dir` for the folders above each mount point, outermost first: folders bubblewrap makes on
 * its own for a mount are open to root alone, and the sandbox's user must pass through them.
 */
function mountPoints(targets: readonly string[]): string[] {
  const made = new Set(['/', '/tmp', '/dev', '/proc', '/etc', ...SYSTEM_DIRS]);
  const out: string[] = [];
  for (const target of targets) {
    const above: string[] = [];
    for (let dir = path.dirname(target); !made.has(dir); dir = path.dirname(dir)) above.unshift(dir);
    for (const dir of above) {
      made.add(dir);
      out.push('--dir', dir);
    }
  }
  return out;
}

/** bwrap arguments that show the system's runtime read-only, keeping merged-/usr symlinks (`/bin -> usr/bin`) as symlinks. */
function systemMounts(dirs: readonly string[]): string[] {
  const out: string[] = [];
  for (const dir of dirs) {
    let stat;
    try {
      stat = lstatSync(dir);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) out.push('--symlink', readlinkSync(dir), dir);
    else if (stat.isDirectory()) out.push('--ro-bind', dir, dir);
  }
  return out;
}

/**
 * The folders a program needs to read to run: for the command and each absolute path among its
 * arguments that is not part of the system, the folder it lies in and, for a script inside a
 * package tree, the outermost `node_modules` above it (its dependencies). Only folders that
 * exist are returned.
 */
export function installFolders(command: string, args: readonly string[], exists: (p: string) => boolean): string[] {
  const out = new Set<string>();
  for (const candidate of [command, ...args]) {
    if (!path.isAbsolute(candidate) || !exists(candidate)) continue;
    if (SYSTEM_DIRS.some((dir) => candidate === dir || candidate.startsWith(`${dir}/`))) continue;
    const parts = candidate.split('/');
    const outermost = parts.indexOf('node_modules');
    if (outermost > 0) {
      out.add(parts.slice(0, outermost + 1).join('/'));
      continue;
    }
    const dir = path.dirname(candidate);
    out.add(dir);
    // A script beside its project's dependencies: the nearest node_modules above it.
    for (let up = dir; up !== path.dirname(up); up = path.dirname(up)) {
      const modules = path.join(up, 'node_modules');
      if (exists(modules)) {
        out.add(modules);
        break;
      }
    }
  }
  return [...out];
}
