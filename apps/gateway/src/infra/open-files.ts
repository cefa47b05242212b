import { readFileSync } from 'node:fs';

/** File descriptors kept for everything but streams: database and Redis connections, short requests, logs. */
export const DESCRIPTOR_RESERVE = 1024;

/**
 * The soft limit on this process's open files (`ulimit -n`), read from /proc/self/limits.
 * @returns null where that cannot be read (not Linux) or the limit is unlimited.
 */
export function openFilesLimit(limits = readProcLimits()): number | null {
  const line = limits?.split('\n').find((l) => l.startsWith('Max open files'));
  const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
  return soft && /^\d+$/.test(soft) ? Number(soft) : null;
}

function readProcLimits(): string | null {
  try {
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return null;
  }
}

/**
 * How many streams this gateway process may hold open: DATAAGENT_MAX_STREAMS_PER_GATEWAY, or
 * half the open-files limit when unset, so the descriptor table is never the first wall.
 * @returns the cap, or null for no cap (no setting, and no limit known)
 * @throws Error naming the setting when it leaves fewer than DESCRIPTOR_RESERVE descriptors for the rest
 */
export function streamCapacity(configured: number | undefined, openFiles: number | null): number | null {
  if (configured === undefined) return openFiles === null ? null : Math.max(1, Math.floor(openFiles / 2));
  if (openFiles !== null && configured > openFiles - DESCRIPTOR_RESERVE) {
    throw new Error(
      `DATAAGENT_MAX_STREAMS_PER_GATEWAY=${configured} leaves fewer than ${DESCRIPTOR_RESERVE} of this process's ${openFiles} open files for everything else: ` +
        `lower it to ${Math.max(1, openFiles - DESCRIPTOR_RESERVE)} or less, or raise the limit (ulimit -n)`,
    );
  }
  return configured;
}
