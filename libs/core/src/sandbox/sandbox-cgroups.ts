import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** What one sandbox may use in all, whatever number of processes it starts. */
export interface CgroupLimits {
  memoryBytes: number;
  processes: number;
  /** CPUs its processes may use together (a CFS quota); absent or 0: no bound of its own. */
  cpus?: number;
}

/** How the `cpu` controller bounds sandboxes, where it is available. */
export interface CpuBounds {
  /** CPUs all of one tenant's sandboxes (on this worker's host) may use together. */
  tenantCpus: number;
}

/** One sandbox's control groups: the `cgroup.procs` files its first process joins, and their removal. */
export interface SandboxGroup {
  procs: string[];
  /** Which of the group's limits stopped something so far: `memory` (a process was killed) and `processes` (a fork was refused). */
  limitsHit(): Array<'memory' | 'processes'>;
  /** Removes the groups once the processes in them are gone (retried for a few seconds). */
  remove(): void;
}

const PARENT = 'dataagent-sandboxes';
/** The CFS period quotas are counted in (the kernel's default). */
const PERIOD_US = 100_000;
/**
 * The weight of all sandboxes together against each of the host's own processes (the worker,
 * the gateway, the databases: 1024 each on v1, 100 on v2): a quarter, so a worker busy with
 * other people's runs keeps its CPU while sandboxes still use whatever is idle.
 */
const SANDBOXES_SHARES = 256;
const SANDBOXES_WEIGHT = 25;

/**
 * Control groups that bound a whole sandbox (memory of all its processes together, their
 * number, and their CPU), on cgroup v2 or on v1's `memory`, `pids` and `cpu` hierarchies. CPU is
 * bounded twice: each sandbox to its own quota, inside a group per tenant with a quota for all of
 * that tenant's sandboxes, so one tenant's busy loops leave the other CPUs to everyone else; the
 * sandboxes together also weigh less than the worker. Available to a worker that may create
 * groups (root, with the hierarchy mounted writable); otherwise sandboxes fall back to
 * per-process limits alone. Tenant groups stay for the next sandbox (one per tenant).
 */
export class SandboxCgroups {
  private next = 0;

  private constructor(
    readonly version: 'v1' | 'v2',
    /** v2: one parent folder; v1: the memory one and the pids one. */
    private readonly parents: string[],
    /** v1: the `cpu` hierarchy's parent folder; v2: the parent itself when `cpu` is enabled. Absent: no CPU bound. */
    private readonly cpuParent: string | undefined,
    private readonly cpu: CpuBounds,
  ) {}

  /** Whether sandboxes get CPU bounds here (the `cpu` controller is available). */
  get boundsCpu(): boolean {
    return this.cpuParent !== undefined;
  }

  /** The groups this process may make under `root`, or undefined when it may not. */
  static detect(root = '/sys/fs/cgroup', cpu: CpuBounds = { tenantCpus: 1 }): SandboxCgroups | undefined {
    try {
      if (existsSync(path.join(root, 'cgroup.controllers'))) {
        const controllers = readFileSync(path.join(root, 'cgroup.controllers'), 'utf8').split(/\s+/);
        if (!controllers.includes('memory') || !controllers.includes('pids')) return undefined;
        const withCpu = controllers.includes('cpu');
        const parent = path.join(root, PARENT);
        mkdirSync(parent, { recursive: true });
        writeFileSync(path.join(parent, 'cgroup.subtree_control'), withCpu ? '+memory +pids +cpu' : '+memory +pids');
        if (withCpu) writeFileSync(path.join(parent, 'cpu.weight'), String(SANDBOXES_WEIGHT));
        return SandboxCgroups.tried(new SandboxCgroups('v2', [parent], withCpu ? parent : undefined, cpu));
      }
      const [memory, pids, cpuRoot] = ['memory', 'pids', 'cpu'].map((name) => path.join(root, name));
      if (!existsSync(path.join(memory, 'memory.limit_in_bytes')) || !existsSync(path.join(pids, 'cgroup.procs'))) return undefined;
      const parents = [path.join(memory, PARENT), path.join(pids, PARENT)];
      for (const parent of parents) mkdirSync(parent, { recursive: true });
      let cpuParent: string | undefined;
      if (existsSync(path.join(cpuRoot, 'cpu.cfs_quota_us'))) {
        cpuParent = path.join(cpuRoot, PARENT);
        mkdirSync(cpuParent, { recursive: true });
        writeFileSync(path.join(cpuParent, 'cpu.shares'), String(SANDBOXES_SHARES));
      }
      return SandboxCgroups.tried(new SandboxCgroups('v1', parents, cpuParent, cpu));
    } catch {
      return undefined;
    }
  }

  /** `groups` when a trial group with limits can be made and removed, else undefined. */
  private static tried(groups: SandboxCgroups): SandboxCgroups | undefined {
    try {
      groups.create({ memoryBytes: 64 * 1024 ** 2, processes: 8, cpus: 1 }).remove();
      return groups;
    } catch {
      return undefined;
    }
  }

  /**
   * Makes the groups of one sandbox with its limits, inside its tenant's group when `tenantId`
   * is given (made with the tenant's CPU quota the first time).
   * @throws Error when a group cannot be made or limited (nothing of the sandbox's is left behind).
   */
  create(limits: CgroupLimits, tenantId?: string): SandboxGroup {
    const name = `${process.pid}-${this.next++}`;
    const tenant = tenantId === undefined ? undefined : `tenant-${createHash('sha256').update(tenantId).digest('hex').slice(0, 16)}`;
    // v2 nests the whole sandbox under its tenant (one tree); v1 only the cpu hierarchy.
    const dirs =
      this.version === 'v2'
        ? [path.join(this.parents[0], ...(tenant && this.cpuParent ? [tenant] : []), name)]
        : [...this.parents.map((parent) => path.join(parent, name)), ...(this.cpuParent ? [path.join(this.cpuParent, ...(tenant ? [tenant] : []), name)] : [])];
    const removeNow = () => {
      for (const dir of dirs) {
        try {
          rmdirSync(dir);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
      }
    };
    // cgroup v1 refuses a quota above its parent's.
    const cpus = limits.cpus && tenant ? Math.min(limits.cpus, this.cpu.tenantCpus) : limits.cpus;
    try {
      if (tenant && this.cpuParent) this.ensureTenant(path.join(this.cpuParent, tenant));
      for (const dir of dirs) mkdirSync(dir);
      if (this.version === 'v2') {
        const [dir] = dirs;
        writeFileSync(path.join(dir, 'memory.max'), String(limits.memoryBytes));
        if (existsSync(path.join(dir, 'memory.swap.max'))) writeFileSync(path.join(dir, 'memory.swap.max'), '0');
        writeFileSync(path.join(dir, 'pids.max'), String(limits.processes));
        if (this.cpuParent && cpus) writeFileSync(path.join(dir, 'cpu.max'), cpuMax(cpus));
      } else {
        const [memory, pids, cpu] = dirs;
        writeFileSync(path.join(memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
        // Set after the memory limit (the kernel wants memsw ≥ memory); absent without swap accounting.
        if (existsSync(path.join(memory, 'memory.memsw.limit_in_bytes'))) writeFileSync(path.join(memory, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
        writeFileSync(path.join(pids, 'pids.max'), String(limits.processes));
        if (cpu && cpus) writeCfsQuota(cpu, cpus);
      }
    } catch (err) {
      removeNow();
      throw err;
    }
    const counter = (file: string, name: string) => {
      try {
        return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(readFileSync(file, 'utf8'))?.[1] ?? 0);
      } catch {
        return 0;
      }
    };
    const [memoryEvents, pidsEvents] =
      this.version === 'v2' ? [path.join(dirs[0], 'memory.events'), path.join(dirs[0], 'pids.events')] : [path.join(dirs[0], 'memory.oom_control'), path.join(dirs[1], 'pids.events')];
    return {
      procs: dirs.map((dir) => path.join(dir, 'cgroup.procs')),
      limitsHit: () => [...(counter(memoryEvents, 'oom_kill') > 0 ? (['memory'] as const) : []), ...(counter(pidsEvents, 'max') > 0 ? (['processes'] as const) : [])],
      remove: () => {
        // The kernel ends the namespace's processes as the sandbox exits: a group may stay busy a moment.
        const attempt = (left: number) => {
          try {
            removeNow();
          } catch {
            if (left > 0) setTimeout(() => attempt(left - 1), 100).unref();
          }
        };
        attempt(50);
      },
    };
  }

  /**
   * Makes a tenant's group, or sets its quota again when it differs (the operator may have
   * changed it; another worker may have made it). Left alone otherwise: each write restarts the
   * group's CFS period, which a running tenant need not pay for at every sandbox.
   */
  private ensureTenant(dir: string): void {
    const made = mkdirSync(dir, { recursive: true }) !== undefined;
    const current = (file: string) => {
      try {
        return readFileSync(path.join(dir, file), 'utf8').trim();
      } catch {
        return undefined;
      }
    };
    try {
      if (this.version === 'v2') {
        // Its sandboxes need the controllers handed down, as the parent hands them to it.
        if (made) writeFileSync(path.join(dir, 'cgroup.subtree_control'), '+memory +pids +cpu');
        if (current('cpu.max') !== cpuMax(this.cpu.tenantCpus)) writeFileSync(path.join(dir, 'cpu.max'), cpuMax(this.cpu.tenantCpus));
      } else if (current('cpu.cfs_period_us') !== String(PERIOD_US) || current('cpu.cfs_quota_us') !== String(quotaUs(this.cpu.tenantCpus))) {
        writeCfsQuota(dir, this.cpu.tenantCpus);
      }
    } catch (err) {
      // v1 refuses a quota below a running sandbox's: the group keeps the one it has until they end.
      if (made) throw err;
    }
  }
}

/** v2's `cpu.max` for this many CPUs. */
function cpuMax(cpus: number): string {
  return `${quotaUs(cpus)} ${PERIOD_US}`;
}

/** Sets a v1 group's CFS period and quota for this many CPUs. */
function writeCfsQuota(dir: string, cpus: number): void {
  writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
  writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(quotaUs(cpus)));
}

/** Microseconds of CPU per period for this many CPUs; the kernel takes no less than 1 ms. */
function quotaUs(cpus: number): number {
  return Math.max(1_000, Math.round(cpus * PERIOD_US));
}
