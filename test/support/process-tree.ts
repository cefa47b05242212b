import { readdirSync, readFileSync } from 'node:fs';

/** One running process as /proc/<pid>/stat describes it. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  state: string;
}

/**
 * Every live process on the machine, read from /proc in one pass (this kernel has no
 * /proc/<pid>/task/<tid>/children). Zombies are left out: they run nothing, and whoever
 * reaps them is not the code under test.
 */
export function processTable(): ProcessInfo[] {
  const table: ProcessInfo[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // it ended while we looked
    }
    // The command name is in parentheses and may hold spaces: fields restart after the last ')'.
    const [state, ppid, pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z' || state === 'X') continue;
    table.push({ pid: Number(name), ppid: Number(ppid), pgid: Number(pgid), state: state! });
  }
  return table;
}

/** The pids of every live process below `pid` (children, grandchildren, ...). */
export function descendants(pid: number, table = processTable()): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const p of table) {
      if (p.ppid === parent) {
        found.push(p.pid);
        queue.push(p.pid);
      }
    }
  }
  return found.sort((a, b) => a - b);
}

/** The pids of live processes in any of these process groups. */
export function groupMembers(pgids: Iterable<number>, table = processTable()): number[] {
  const wanted = new Set(pgids);
  return table.filter((p) => wanted.has(p.pgid)).map((p) => p.pid);
}

/** Whether `pid` is a live (not zombie) process. */
export function isRunning(pid: number, table = processTable()): boolean {
  return table.some((p) => p.pid === pid);
}
