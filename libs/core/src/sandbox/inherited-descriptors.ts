import { closeSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** O_CLOEXEC as /proc/PID/fdinfo's octal `flags` shows it on Linux. */
const O_CLOEXEC = 0o2000000;

/**
 * Whether a descriptor whose /proc/self/fdinfo text is `fdinfo` stays open across exec: its
 * `flags` line lacks O_CLOEXEC. Undefined when the text has no `flags` line.
 */
export function staysOpenAcrossExec(fdinfo: string): boolean | undefined {
  const flags = /^flags:\s*([0-7]+)$/m.exec(fdinfo)?.[1];
  return flags === undefined ? undefined : (parseInt(flags, 8) & O_CLOEXEC) === 0;
}

/**
 * Closes every descriptor above 2 that would stay open across exec: ones this process inherited
 * from whatever started it. Node marks only the first unbroken run of descriptors close-on-exec
 * at start (libuv's `uv_disable_stdio_inheritance` stops at the first gap past fd 15), and its
 * `spawn` closes nothing else, so a pipe inherited at, say, fd 251 would be open in every
 * command, skill script and stdio server the worker starts. Everything Node opens itself is
 * close-on-exec, so what this closes is nobody's here, but for an IPC channel to a parent that
 * forked this process (a process manager's), which stays. Call it first thing at start.
 * @param keep descriptors to leave open; default the IPC channel's, if any.
 * @returns the descriptors closed, each with what it was (`pipe:[123]`, a path).
 */
export function closeInheritedDescriptors(proc = '/proc/self', keep: readonly number[] = ipcChannelFd()): Array<{ fd: number; target: string }> {
  let entries: string[];
  try {
    entries = readdirSync(`${proc}/fd`);
  } catch {
    // No /proc (not Linux): nothing to look at.
    return [];
  }
  const closed: Array<{ fd: number; target: string }> = [];
  for (const entry of entries) {
    const fd = Number(entry);
    if (!Number.isInteger(fd) || fd <= 2 || keep.includes(fd)) continue;
    let target: string;
    let inherited: boolean | undefined;
    try {
      target = readlinkSync(`${proc}/fd/${fd}`);
      inherited = staysOpenAcrossExec(readFileSync(`${proc}/fdinfo/${fd}`, 'utf8'));
    } catch {
      // Gone meanwhile (the listing's own descriptor is one).
      continue;
    }
    if (!inherited) continue;
    try {
      closeSync(fd);
      closed.push({ fd, target });
    } catch {
      // Closed meanwhile.
    }
  }
  return closed;
}

/** The descriptor of the IPC channel to the parent that forked this process, if there is one. */
function ipcChannelFd(): number[] {
  const fd = (process.channel as { fd?: unknown } | undefined)?.fd;
  return typeof fd === 'number' && fd > 2 ? [fd] : [];
}
