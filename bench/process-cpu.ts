import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

const SAMPLE_EVERY_MS = 250;
const PEAK_WINDOW_SAMPLES = 4; // 1 s

/** A process's CPU seconds from /proc/<pid>/stat: its own, and its reaped children's. */
function statCpu(pid: number): { own: number; reaped: number; ppid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces: fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { own: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND, reaped: (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND, ppid: Number(fields[1]) };
  } catch {
    return null;
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc; NaN once it is gone. */
export function processCpuSeconds(pid: number): number {
  return statCpu(pid)?.own ?? NaN;
}

/**
 * CPU seconds a process and everything below it have used so far: the live ones' own and the
 * exited ones' (which the kernel adds to their parent once reaped, so a child that dies and is
 * replaced mid-interval still counts). NaN once the process is gone.
 * @param table Every live process's parent, by pid (one /proc scan shared by all the trees of a sample).
 */
export function processTreeCpuSeconds(pid: number, table: ReadonlyMap<number, number> = parentTable()): number {
  const root = statCpu(pid);
  if (!root) return NaN;
  let total = root.own + root.reaped;
  const below = [pid];
  while (below.length > 0) {
    const parent = below.pop()!;
    for (const [child, ppid] of table) {
      if (ppid !== parent) continue;
      const cpu = statCpu(child);
      if (cpu) total += cpu.own + cpu.reaped;
      below.push(child);
    }
  }
  return total;
}

/** Every live process's parent pid, by pid, from one pass over /proc. */
function parentTable(): Map<number, number> {
  const table = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cpu = statCpu(Number(name));
    if (cpu) table.set(Number(name), cpu.ppid);
  }
  return table;
}

/** CPU seconds the whole machine has been busy (all cores, everything but idle and iowait), from /proc/stat. */
function machineBusySeconds(): number {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
    const idle = ticks[3]! + ticks[4]!;
    // steal, guest and guest_nice (8 and on) are not time this machine's processes ran.
    const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
    return (total - idle - ticks[7]!) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** The role under which {@link CpuMeter} reports what processes outside its list used. */
export const OTHER_PROCESSES = 'other procs';

/** A process's CPU use over an interval, as a percentage of one core (200 % = both cores of a 2-core machine). */
export interface CpuUse {
  average: number;
  /** The busiest 1-second window. */
  peak: number;
  /** CPU seconds (user + system) used over the whole interval: the figure per-event and per-run costs divide. */
  seconds: number;
}

/**
 * Measures how busy each process was over an interval, from /proc (Linux only), sampling
 * every 250 ms so a short saturated burst shows even when the average is low. Also reports
 * what all other processes of the machine used ({@link OTHER_PROCESSES}).
 */
export class CpuMeter {
  private readonly samples: Array<{ at: number; seconds: Map<string, number> }> = [];
  private timer?: NodeJS.Timeout;

  /**
   * @param pids Process ids by role.
   * @param trees Roles counted with every process below theirs (a gateway cluster's primary and its gateway processes).
   */
  constructor(private readonly pids: Record<string, number>, private readonly trees: readonly string[] = []) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_EVERY_MS);
  }

  /** @returns CPU use per role since {@link start}. */
  stop(): Record<string, CpuUse> {
    clearInterval(this.timer);
    this.sample();
    const first = this.samples[0]!;
    const last = this.samples.at(-1)!;
    const used = (role: string, from: typeof first, to: typeof first) => to.seconds.get(role)! - from.seconds.get(role)!;
    const percent = (role: string, from: typeof first, to: typeof first) => (used(role, from, to) / ((to.at - from.at) / 1000)) * 100;
    const usage: Record<string, CpuUse> = {};
    for (const role of [...Object.keys(this.pids), OTHER_PROCESSES]) {
      let peak = NaN;
      for (let i = 0; i + PEAK_WINDOW_SAMPLES < this.samples.length; i++) {
        const value = percent(role, this.samples[i]!, this.samples[i + PEAK_WINDOW_SAMPLES]!);
        if (!(value <= peak)) peak = value;
      }
      usage[role] = { average: percent(role, first, last), peak, seconds: used(role, first, last) };
    }
    return usage;
  }

  private sample(): void {
    const seconds = new Map<string, number>();
    const table = this.trees.length > 0 ? parentTable() : undefined;
    let ours = 0;
    for (const [role, pid] of Object.entries(this.pids)) {
      const used = table && this.trees.includes(role) ? processTreeCpuSeconds(pid, table) : processCpuSeconds(pid);
      seconds.set(role, used);
      ours += used;
    }
    // Everything else on the machine (other users' builds and tests) competes for the same cores.
    seconds.set(OTHER_PROCESSES, machineBusySeconds() - ours);
    this.samples.push({ at: performance.now(), seconds });
  }
}
