import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** What one sandbox may use in all, whatever number of processes it starts. */
export interface CgroupLimits {
  memoryBytes: number;
  processes: number;
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

/**
 * Control groups that bound a whole sandbox (memory of all its processes together, and their
 * number), on cgroup v2 or on v1's `memory` and `pids` hierarchies. Available to a worker that
 * may create groups (root, with the hierarchy mounted writable); otherwise sandboxes fall back to
 * per-process limits alone.
 */
export class SandboxCgroups {
  private next = 0;

  private constructor(
    readonly version: 'v1' | 'v2',
    /** v2: one parent folder; v1: the memory one and the pids one. */
    private readonly parents: string[],
  ) {}

  /** The groups this process may make under `root`, or undefined when it may not. */
  static detect(root = '/sys/fs/cgroup'): SandboxCgroups | undefined {
    try {
      if (existsSync(path.join(root, 'cgroup.controllers'))) {
        const controllers = readFileSync(path.join(root, 'cgroup.controllers'), 'utf8').split(/\s+/);
        if (!controllers.includes('memory') || !controllers.includes('pids')) return undefined;
        const parent = path.join(root, PARENT);
        mkdirSync(parent, { recursive: true });
        writeFileSync(path.join(parent, 'cgroup.subtree_control'), '+memory +pids');
        return SandboxCgroups.tried(new SandboxCgroups('v2', [parent]));
      }
      const [memory, pids] = ['memory', 'pids'].map((name) => path.join(root, name));
      if (!existsSync(path.join(memory, 'memory.limit_in_bytes')) || !existsSync(path.join(pids, 'cgroup.procs'))) return undefined;
      const parents = [path.join(memory, PARENT), path.join(pids, PARENT)];
      for (const parent of parents) mkdirSync(parent, { recursive: true });
      return SandboxCgroups.tried(new SandboxCgroups('v1', parents));
    } catch {
      return undefined;
    }
  }

  /** `groups` when a trial group with limits can be made and removed, else undefined. */
  private static tried(groups: SandboxCgroups): SandboxCgroups | undefined {
    try {
      groups.create({ memoryBytes: 64 * 1024 ** 2, processes: 8 }).remove();
      return groups;
    } catch {
      return undefined;
    }
  }

  /**
   * Makes the groups of one sandbox with its limits.
   * @throws Error when a group cannot be made or limited (nothing is left behind).
   */
  create(limits: CgroupLimits): SandboxGroup {
    const name = `${process.pid}-${this.next++}`;
    const dirs = this.parents.map((parent) => path.join(parent, name));
    const removeNow = () => {
      for (const dir of dirs) {
        try {
          rmdirSync(dir);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
      }
    };
    try {
      for (const dir of dirs) mkdirSync(dir);
      if (this.version === 'v2') {
        const [dir] = dirs;
        writeFileSync(path.join(dir, 'memory.max'), String(limits.memoryBytes));
        if (existsSync(path.join(dir, 'memory.swap.max'))) writeFileSync(path.join(dir, 'memory.swap.max'), '0');
        writeFileSync(path.join(dir, 'pids.max'), String(limits.processes));
      } else {
        const [memory, pids] = dirs;
        writeFileSync(path.join(memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
        // Set after the memory limit (the kernel wants memsw ≥ memory); absent without swap accounting.
        if (existsSync(path.join(memory, 'memory.memsw.limit_in_bytes'))) writeFileSync(path.join(memory, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
        writeFileSync(path.join(pids, 'pids.max'), String(limits.processes));
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
}
