import { NoSandbox, sandboxLimitsHit, type Sandbox, type SandboxedCommand } from '../../sandbox/sandbox.js';

/** The PATH given to commands and scripts instead of the worker's own. */
export const SAFE_PATH = '/usr/local/bin:/usr/bin:/bin';

export interface ChildProcessOptions {
  /** Kill the whole process group after this long. */
  timeoutMs: number;
  /** Bytes of stdout and of stderr kept; the rest is dropped and marked. */
  maxOutputBytes: number;
  /** Grace between SIGTERM and SIGKILL. */
  killGraceMs: number;
  /** Stops the process (as a timeout does) when it fires. */
  signal: AbortSignal;
}

export interface ChildProcessOutcome {
  exitCode: number | null;
  /** The signal that ended the process, if one did. */
  signal: NodeJS.Signals | null;
  /** Captured stdout; ends with a `… (N more bytes dropped)` line when truncated. */
  stdout: string;
  stderr: string;
  timedOut: boolean;
  cancelled: boolean;
  /** True when stdout or stderr went past `maxOutputBytes`. */
  truncated: boolean;
  /** Set when the process could not be started at all. */
  spawnError?: Error;
  /** Set when a limit of the sandbox stopped it or one of its processes, saying which. */
  limitHit?: string;
}

/**
 * Runs `command` (no shell in between) in `sandbox`, in its own process group, so a timeout or
 * cancel kills its grandchildren too, and so does a normal exit: nothing it started in the
 * background outlives it (in bubblewrap, the kernel ends the whole PID namespace). Never rejects.
 */
export function runChildProcess(command: SandboxedCommand, o: ChildProcessOptions, sandbox: Sandbox = new NoSandbox()): Promise<ChildProcessOutcome> {
  return new Promise((resolve) => {
    let child: ReturnType<Sandbox['spawn']>;
    try {
      child = sandbox.spawn(command, ['ignore', 'pipe', 'pipe']);
    } catch (err) {
      resolve({ exitCode: null, signal: null, stdout: '', stderr: '', timedOut: false, cancelled: false, truncated: false, spawnError: err as Error });
      return;
    }
    const stdout = capture(o.maxOutputBytes);
    const stderr = capture(o.maxOutputBytes);
    child.stdout!.on('data', stdout.add);
    child.stderr!.on('data', stderr.add);

    let stopped: 'timeout' | 'cancelled' | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    };
    const stop = (why: 'timeout' | 'cancelled') => {
      if (stopped) return;
      stopped = why;
      killGroup('SIGTERM');
      killTimer = setTimeout(() => killGroup('SIGKILL'), o.killGraceMs);
      killTimer.unref();
    };
    const timer = setTimeout(() => stop('timeout'), o.timeoutMs);
    const onAbort = () => stop('cancelled');
    o.signal.addEventListener('abort', onAbort, { once: true });
    if (o.signal.aborted) onAbort();

    let finished = false;
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
      resolve({
        exitCode,
        signal,
        stdout: stdout.text(),
        stderr: stderr.text(),
        timedOut: stopped === 'timeout',
        cancelled: stopped === 'cancelled',
        truncated: stdout.truncated() || stderr.truncated(),
        ...(spawnError ? { spawnError } : {}),
        ...(sandboxLimitsHit(child) ? { limitHit: sandboxLimitsHit(child) } : {}),
      });
    };
    // Background children (`cmd &`) would keep the pipes open: none outlives the process.
    child.on('exit', () => killGroup('SIGKILL'));
    child.on('error', (err) => finish(null, null, err));
    child.on('close', (code, signal) => finish(code, signal));
  });
}

function capture(limit: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  return {
    add: (chunk: Buffer) => {
      const room = limit - kept;
      if (room > 0) {
        chunks.push(chunk.subarray(0, room));
        kept += Math.min(room, chunk.length);
      }
      dropped += Math.max(0, chunk.length - Math.max(room, 0));
    },
    truncated: () => dropped > 0,
    text: () => Buffer.concat(chunks).toString('utf8') + (dropped > 0 ? `\n… (${dropped} more bytes dropped)` : ''),
  };
}
