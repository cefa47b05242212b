import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { SandboxCgroups } from './sandbox-cgroups.js';
import { untilLoopbackUp } from './sandbox-loopback.js';

/** How processes a user causes are confined: `bwrap` (bubblewrap namespaces) or `none` (the worker's own user and view). */
export type SandboxKind = 'bwrap' | 'none';

/** Limits of one sandboxed command or server; exceeding one ends it (or fails the call that hit it). */
export interface SandboxLimits {
  /** Private writable memory of each process (RLIMIT_DATA), and of the whole sandbox where control groups bound it. */
  memoryBytes: number;
  /** Processes and threads (RLIMIT_NPROC): per sandbox when it has a user namespace of its own, per user when a root worker gives each user a uid. */
  processes: number;
  /** CPU seconds of each process (RLIMIT_CPU). */
  cpuSeconds: number;
  /** CPUs the whole sandbox may use at once, where control groups bound it (a CFS quota). */
  cpus: number;
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
  cpus: 1,
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
  /** A network namespace of its own with outbound access through slirp4netns (never the host's loopback); default no network at all. */
  network?: boolean;
  limits?: Partial<SandboxLimits>;
  /** The OS user it runs as when the worker runs as root (see {@link BwrapSandbox.userFor}); default the first of the range. */
  user?: { uid: number; gid: number };
  /** Whose it is: with control groups, the sandbox shares its tenant's CPU bound with the tenant's other sandboxes. */
  tenantId?: string;
  /** Bytes the workspace's quota has room for: no file the command writes grows past it (RLIMIT_FSIZE, with the file size limit). */
  writeRoom?: number;
}

/** What becomes of a started command's stdin, stdout and stderr. */
export type SandboxStdio = ['pipe' | 'ignore', 'pipe' | 'ignore', 'pipe' | 'ignore'];

/** Where processes a user causes are started. */
export interface Sandbox {
  readonly kind: SandboxKind;
  /** The OS user a caller's commands run as, when the sandbox chooses one (a root worker). */
  userFor?(tenantId: string, userId: string): { uid: number; gid: number } | undefined;
  /**
   * Starts `command` leading a process group of its own (`detached`): killing that group ends
   * it and, in a sandbox, everything it started.
   * @throws SandboxError when it cannot be started as asked; nothing ran.
   */
  spawn(command: SandboxedCommand, stdio: SandboxStdio): ChildProcess;
}

/** No confinement: the command runs as the worker's OS user and sees what the worker sees. */
export class NoSandbox implements Sandbox {
  readonly kind = 'none';

  spawn(command: SandboxedCommand, stdio: SandboxStdio): ChildProcess {
    return spawn(command.command, [...command.args], { cwd: command.cwd ?? command.workspace, env: command.env, stdio, detached: true });
  }
}

export interface BwrapSandboxOptions {
  /** The bubblewrap binary. Default `bwrap` on the worker's PATH. */
  bwrap?: string;
  /** The slirp4netns binary giving a networked server a network namespace of its own. Absent: such servers are refused. */
  slirp4netns?: string;
  /** The prlimit binary (util-linux) that applies the limits inside the sandbox. Default /usr/bin/prlimit. */
  prlimit?: string;
  /** The setpriv binary (util-linux) that drops a root worker's sandbox to its unprivileged user. Default /usr/bin/setpriv. */
  setpriv?: string;
  limits?: Partial<SandboxLimits>;
  /** When the worker runs as root: the first of the 65,536 OS user ids its sandboxes run as. Default {@link DEFAULT_SANDBOX_UID_BASE}. */
  uid?: number;
  /** The host's system folders, tested for existence; default {@link SYSTEM_DIRS}. */
  systemDirs?: readonly string[];
  /** Whether the worker runs as root; default: asked of the process. */
  root?: boolean;
  /** Control groups bounding each sandbox as a whole (memory, processes, CPU) and each tenant's sandboxes together (CPU); absent: per-process limits only. */
  cgroups?: SandboxCgroups;
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
 * unless granted (then through slirp4netns, which never forwards to the host's loopback). Limits
 * apply per process through prlimit, and per sandbox (processes, memory, CPU) and per tenant
 * (CPU) through control groups where the worker may make them. When the command ends
 * or its group is killed, bubblewrap's init dies and the kernel ends everything inside.
 */
export class BwrapSandbox implements Sandbox {
  readonly kind = 'bwrap';
  private readonly bwrap: string;
  private readonly prlimit: string;
  private readonly limits: SandboxLimits;
  private readonly system: string[];
  private readonly setpriv: string;
  private readonly root: boolean;

  constructor(private readonly options: BwrapSandboxOptions = {}) {
    this.bwrap = options.bwrap ?? 'bwrap';
    this.prlimit = options.prlimit ?? '/usr/bin/prlimit';
    this.setpriv = options.setpriv ?? '/usr/bin/setpriv';
    this.limits = { ...DEFAULT_SANDBOX_LIMITS, ...options.limits };
    this.system = systemMounts(options.systemDirs ?? SYSTEM_DIRS);
    this.root = options.root ?? (typeof process.getuid === 'function' && process.getuid() === 0);
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

  spawn(command: SandboxedCommand, stdio: SandboxStdio): ChildProcess {
    if (command.network && !this.options.slirp4netns) throw new SandboxError('network_unavailable', 'this worker has no slirp4netns, so it cannot give a sandboxed server a network of its own');
    const limits = { ...this.limits, ...command.limits };
    const group = this.options.cgroups?.create(limits, command.tenantId);
    const args = this.argumentsFor(command);
    // bubblewrap's own environment is empty: inside, /proc/1/environ is bubblewrap's. With
    // control groups, a shell joins them first and then becomes bubblewrap, so every process
    // of the sandbox is born inside them.
    const [file, fileArgs] = group ? ['/bin/sh', ['-c', JOIN_GROUPS, 'sh', ...group.procs, '--', this.bwrap, ...args]] : [this.bwrap, args];
    const child = spawn(file, fileArgs, { cwd: '/', env: {}, stdio: command.network ? [...stdio, 'pipe', 'pipe'] : stdio, detached: true });
    if (group) {
      // Read before the groups go: which limit, if any, stopped something in this sandbox.
      child.once('exit', () => {
        const hit = group.limitsHit().map((limit) => (limit === 'memory' ? `its memory limit (${mib(limits.memoryBytes)}, DATAAGENT_SANDBOX_MEMORY)` : `its process limit (${limits.processes}, DATAAGENT_SANDBOX_PROCESSES)`));
        if (hit.length > 0) limitsHit.set(child, `the sandbox stopped it at ${hit.join(' and ')}`);
      });
      child.once('close', () => group.remove());
    }
    if (command.network) this.connect(child);
    return child;
  }

  /**
   * Gives a started sandbox its network: bubblewrap reports its child's pid on fd 3 and waits on
   * fd 4; slirp4netns then puts a tap device into that network namespace, with no way to the
   * host's loopback, and the command starts once it is up. slirp4netns ends with the sandbox.
   * It starts only once bubblewrap has set up the namespace's loopback (see {@link untilLoopbackUp}).
   */
  private connect(child: ChildProcess): void {
    const [info, block] = [child.stdio[3] as Readable, child.stdio[4] as Writable];
    let text = '';
    const onInfo = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const pid = /"child-pid":\s*(\d+)/.exec(text)?.[1];
      if (!pid) return;
      info.off('data', onInfo);
      void untilLoopbackUp(Number(pid)).then((seen) => {
        // A sandbox that ended meanwhile gets none: its pid may be another process's by now, and
        // a slirp4netns started after the exit would never be told to end.
        if (seen !== 'gone' && child.exitCode === null && child.signalCode === null) startSlirp(pid);
      });
    };
    const startSlirp = (pid: string) => {
      const root = this.root;
      const slirp = spawn(
        this.options.slirp4netns!,
        ['--configure', '--mtu=65520', '--disable-host-loopback', '--enable-sandbox', '--ready-fd=3', '--exit-fd=4', ...(root ? [] : [`--userns-path=/proc/${pid}/ns/user`]), pid, 'tap0'],
        { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'], env: {} },
      );
      const ready = slirp.stdio[3] as Readable;
      ready.once('data', () => block.end('1'));
      const fail = () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      };
      slirp.once('error', fail);
      slirp.once('exit', fail);
      // Closing the exit fd ends slirp4netns; so does this process dying.
      child.once('exit', () => (slirp.stdio[4] as Writable).destroy());
    };
    info.on('data', onInfo);
    info.on('error', () => undefined);
    block.on('error', () => undefined);
  }

  /** bubblewrap's arguments for `command` (the whole command line after `bwrap`). */
  argumentsFor(command: SandboxedCommand): string[] {
    const limits = { ...this.limits, ...command.limits };
    const user = command.user ?? (this.root ? { uid: this.options.uid ?? DEFAULT_SANDBOX_UID_BASE, gid: this.options.uid ?? DEFAULT_SANDBOX_UID_BASE } : undefined);
    const namespaces = this.root
      ? // Root sets up the namespaces with its own rights (so no folder above a workspace needs
        // opening to anyone), and setpriv then drops to the caller's unprivileged user.
        ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--unshare-net', '--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID']
      : // A user namespace of its own: the process count is the sandbox's alone.
        ['--unshare-all', '--cap-drop', 'ALL'];
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
      ...(command.network ? ['--info-fd', '3', '--block-fd', '4'] : []),
      '--clearenv',
      ...Object.entries(command.env).flatMap(([name, value]) => ['--setenv', name, value]),
      '--',
      ...drop,
      this.prlimit,
      // With control groups pids.max counts the sandbox's processes; a root worker's uid is the user's, shared by their sandboxes.
      ...(this.options.cgroups ? [] : [`--nproc=${limits.processes}`]),
      `--data=${limits.memoryBytes}`,
      `--cpu=${limits.cpuSeconds}`,
      `--fsize=${Math.max(0, Math.min(limits.fileBytes, command.writeRoom ?? Infinity))}`,
      `--nofile=${limits.openFiles}`,
      '--',
      command.command,
      ...command.args,
    ];
    return args;
  }
}

const limitsHit = new WeakMap<ChildProcess, string>();

/** What the sandbox's limits did to a process started by {@link Sandbox.spawn}, once it has exited; undefined when none stopped anything. */
export function sandboxLimitsHit(child: ChildProcess): string | undefined {
  return limitsHit.get(child);
}

const mib = (bytes: number) => `${Math.round(bytes / 1024 ** 2)} MiB`;

/** Joins each control group named before `--`, then runs what follows. */
const JOIN_GROUPS = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

export type SandboxErrorCode = 'network_unavailable' | 'refused';

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
 * The folders a program needs to read to run: for the command and each absolute path among
 * `operatorPaths` that is not part of the system, the folder it lies in and, for a script inside
 * a package tree, the outermost `node_modules` above it (its dependencies). Only folders that
 * exist are returned, and never the host's root.
 * @param operatorPaths paths the operator wrote (its server's arguments, the command's real
 *   path): never a user's arguments, which would choose what is mounted (`/`, the data folder).
 */
export function installFolders(command: string, operatorPaths: readonly string[], exists: (p: string) => boolean): string[] {
  const out = new Set<string>();
  for (const candidate of [command, ...operatorPaths]) {
    if (!path.isAbsolute(candidate) || !exists(candidate)) continue;
    if (SYSTEM_DIRS.some((dir) => candidate === dir || candidate.startsWith(`${dir}/`))) continue;
    const parts = candidate.split('/');
    const outermost = parts.indexOf('node_modules');
    if (outermost > 0) {
      out.add(parts.slice(0, outermost + 1).join('/'));
      continue;
    }
    const dir = path.dirname(candidate);
    // A file at the top (`/x`) would mount the host's whole root, /proc and /sys with it.
    if (dir === '/') continue;
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
