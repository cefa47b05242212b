import { spawn } from 'node:child_process';
import type { Caller } from '../../session/caller.js';
import type { Workspace } from '../../workspace/workspace.js';
import type { Tool, ToolResult } from '../tool.js';

export interface ShellToolOptions {
  /** Kill the command (its whole process group) after this long. Default 30 s. */
  timeoutMs?: number;
  /** Bytes of stdout and of stderr kept; the rest is dropped and marked. Default 64 KiB. */
  maxOutputBytes?: number;
  /** Grace between SIGTERM and SIGKILL. Default 2 s. */
  killGraceMs?: number;
  /** Extra environment given to commands. The worker's own environment is never passed. */
  env?: Record<string, string>;
}

const SAFE_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * The `shell` tool (seed 002, Req 7.4): runs `/bin/sh -c <command>` in the caller's workspace
 * root with a scrubbed environment, an output cap and a timeout that kills the whole process
 * group. Always sensitive (a person approves each command). Off by default: the server calls
 * this factory only when shell access is enabled. It is not a sandbox: the command runs as the
 * worker's OS user and can read what that user can; isolate workers (container, no secrets on
 * disk) before enabling it.
 */
export function createShellTool(workspaceFor: (caller: Caller) => Workspace, options: ShellToolOptions = {}): Tool {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxOutputBytes = options.maxOutputBytes ?? 64 * 1024;
  const killGraceMs = options.killGraceMs ?? 2_000;
  return {
    name: 'shell',
    description: `Run a shell command (/bin/sh -c) in your workspace root (files/, uploads/, outputs/). Stops after ${Math.round(timeoutMs / 1000)} s. Each command needs the user's approval.`,
    parameters: {
      type: 'object',
      properties: { command: { type: 'string', minLength: 1, description: 'The command line' } },
      required: ['command'],
      additionalProperties: false,
    },
    sensitive: true,
    // Our own timeout reports the partial output; the dispatcher's is only a backstop.
    timeoutMs: timeoutMs + killGraceMs + 1_000,
    async execute(args, ctx): Promise<ToolResult> {
      const workspace = workspaceFor(ctx.caller);
      const cwd = await workspace.ensure();
      try {
        return await runCommand(String(args.command), { cwd, timeoutMs, maxOutputBytes, killGraceMs, signal: ctx.signal, env: { ...options.env } });
      } finally {
        workspace.invalidateUsage();
      }
    },
  };
}

interface RunOptions {
  cwd: string;
  timeoutMs: number;
  maxOutputBytes: number;
  killGraceMs: number;
  signal: AbortSignal;
  env: Record<string, string>;
}

function runCommand(command: string, o: RunOptions): Promise<ToolResult> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], {
      cwd: o.cwd,
      detached: true, // its own process group, so a timeout kills grandchildren too
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: SAFE_PATH, HOME: o.cwd, PWD: o.cwd, TMPDIR: o.cwd, LANG: 'C.UTF-8', ...o.env },
    });
    const stdout = capture(o.maxOutputBytes);
    const stderr = capture(o.maxOutputBytes);
    child.stdout.on('data', stdout.add);
    child.stderr.on('data', stderr.add);

    let stopped: 'timeout' | 'cancelled' | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
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
      const output = { exit_code: exitCode, ...(signal ? { signal } : {}), stdout: stdout.text(), stderr: stderr.text(), ...(stopped === 'timeout' ? { timed_out: true } : {}) };
      if (spawnError) resolve({ success: false, output, error: `Could not start the command: ${spawnError.message}` });
      else if (stopped === 'timeout') resolve({ success: false, output, error: `Command timed out after ${o.timeoutMs} ms and was killed` });
      else if (stopped === 'cancelled') resolve({ success: false, output, error: 'Command cancelled' });
      else resolve({ success: exitCode === 0, output, ...(exitCode === 0 ? {} : { error: `Command exited with ${exitCode ?? signal}` }) });
    };
    // Background children (`cmd &`) would keep the pipes open: none outlives the shell.
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
    text: () => Buffer.concat(chunks).toString('utf8') + (dropped > 0 ? `\n… (${dropped} more bytes dropped)` : ''),
  };
}
