import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds (user + system) a process has used so far, from /proc; NaN once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces: fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/**
 * Measures how busy each process was over an interval, as a percentage of one core
 * (200 % is both cores of a 2-core machine). Linux only.
 */
export class CpuMeter {
  private startedAt = 0;
  private readonly baseline = new Map<string, number>();

  /** @param pids Process ids by role. */
  constructor(private readonly pids: Record<string, number>) {}

  start(): void {
    this.startedAt = performance.now();
    for (const [role, pid] of Object.entries(this.pids)) this.baseline.set(role, cpuSeconds(pid));
  }

  /** @returns Percent of one core per role since {@link start}. */
  stop(): Record<string, number> {
    const seconds = (performance.now() - this.startedAt) / 1000;
    const usage: Record<string, number> = {};
    for (const [role, pid] of Object.entries(this.pids)) {
      usage[role] = ((cpuSeconds(pid) - this.baseline.get(role)!) / seconds) * 100;
    }
    return usage;
  }
}
