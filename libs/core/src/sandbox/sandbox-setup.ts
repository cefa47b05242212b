import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { chown } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import type { SandboxConfig } from '../config/sandbox-settings.js';
import { BwrapSandbox, NoSandbox, type Sandbox } from './sandbox.js';
import { SandboxCgroups } from './sandbox-cgroups.js';

/** What the worker runs users' processes in, and why when that is no sandbox. */
export interface SandboxChoice {
  sandbox: Sandbox;
  /** Set when `sandbox` is `none`: what is missing, in words an operator can act on. */
  reason?: string;
  /** How a whole sandbox is bounded: control groups (`cgroup v1`/`v2`), or per-process limits only. */
  bounds?: string;
  /** The OS user that must own a caller's workspace for the sandbox to write it (the worker runs as root), else undefined. */
  ownerFor?: (tenantId: string, userId: string) => { uid: number; gid: number } | undefined;
}

/** An executable on `PATH` (or the absolute path itself), or undefined. */
export function findExecutable(name: string, searchPath = process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'): string | undefined {
  const candidates = name.includes('/') ? [name] : searchPath.split(':').filter(Boolean).map((dir) => path.join(dir, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Picks the sandbox from DATAAGENT_SANDBOX: `none` as asked; `bwrap`, or unset, after starting a
 * trial command in it (bubblewrap installed, user namespaces allowed, the sandbox user able to
 * write a workspace). Unset and not working: `none`, with the reason.
 * @throws Error when `bwrap` was asked for and does not work here; the message says what is missing.
 */
export async function chooseSandbox(config: SandboxConfig): Promise<SandboxChoice> {
  if (config.mode === 'none') return { sandbox: new NoSandbox(), reason: 'DATAAGENT_SANDBOX=none' };
  const problem = await probeBwrap(config);
  if (problem === undefined) {
    const root = typeof process.getuid === 'function' && process.getuid() === 0;
    const cgroups = root ? SandboxCgroups.detect(undefined, { tenantCpus: config.tenantCpus ?? defaultTenantCpus() }) : undefined;
    const sandbox = new BwrapSandbox({
      bwrap: findExecutable('bwrap'),
      slirp4netns: findExecutable('slirp4netns'),
      prlimit: findExecutable('prlimit'),
      setpriv: findExecutable('setpriv'),
      uid: config.uidBase,
      ...(cgroups ? { cgroups } : {}),
      limits: { memoryBytes: config.memoryBytes, processes: config.processes, cpuSeconds: config.cpuSeconds, cpus: config.cpus, fileBytes: config.fileBytes, openFiles: config.openFiles },
    });
    return { sandbox, bounds: cgroups ? `cgroup ${cgroups.version}${cgroups.boundsCpu ? ' with cpu' : ''}` : 'per-process limits', ownerFor: (tenantId, userId) => sandbox.userFor(tenantId, userId) };
  }
  if (config.mode === 'bwrap') throw new Error(`DATAAGENT_SANDBOX=bwrap, but bubblewrap does not work here: ${problem}`);
  return { sandbox: new NoSandbox(), reason: problem };
}

/** All of a tenant's sandboxes on a host may use half its CPUs (at least one): the rest stays for the worker and everyone else. */
export function defaultTenantCpus(cpus = availableParallelism()): number {
  return Math.max(1, Math.floor(cpus / 2));
}

/** Why a trial command does not run in bubblewrap here, or undefined when it does. */
async function probeBwrap(config: SandboxConfig): Promise<string | undefined> {
  const bwrap = findExecutable('bwrap');
  if (!bwrap) return "bubblewrap is not installed (Debian: apt-get install bubblewrap); it gives each user's process a namespace of its own";
  const prlimit = findExecutable('prlimit');
  if (!prlimit) return 'prlimit (util-linux) is not installed; it applies the sandbox limits';
  const setpriv = findExecutable('setpriv');
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (root && !setpriv) return "setpriv (util-linux) is not installed; a worker running as root needs it to drop sandboxes to an unprivileged user";
  const workspace = mkdtempSync(path.join(tmpdir(), 'dataagent-sandbox-probe-'));
  try {
    const sandbox = new BwrapSandbox({ bwrap, prlimit, ...(setpriv ? { setpriv } : {}), uid: config.uidBase });
    const user = sandbox.userFor('probe', 'probe');
    if (user) await chown(workspace, user.uid, user.gid);
    const command = { command: '/bin/sh', args: ['-c', 'echo ok > probe && cat probe'], env: { PATH: '/usr/bin:/bin' }, workspace, ...(user ? { user } : {}) };
    const outcome = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = sandbox.spawn(command, ['ignore', 'pipe', 'pipe']);
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.on('error', (err) => resolve({ code: null, output: err.message }));
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, output: output.trim() });
      });
    });
    if (outcome.code === 0 && outcome.output === 'ok') return undefined;
    const hint = /namespace|Operation not permitted|setting up uid map/i.test(outcome.output)
      ? ' (user namespaces look disabled: allow unprivileged user namespaces, e.g. sysctl kernel.unprivileged_userns_clone=1, or run the worker where they are allowed)'
      : '';
    return `a trial command in bubblewrap failed: ${outcome.output.slice(0, 300) || `exit code ${outcome.code}`}${hint}`;
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}
