import type { Caller } from '../../session/caller.js';
import type { Workspace } from '../../workspace/workspace.js';
import type { Tool, ToolResult } from '../tool.js';
import { runChildProcess, SAFE_PATH, type ChildProcessOptions } from './child-process.js';

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

/** Runs `/bin/sh -c command`; `o.env` is added to the scrubbed base environment. */
async function runCommand(command: string, o: ChildProcessOptions): Promise<ToolResult> {
  const env = { PATH: SAFE_PATH, HOME: o.cwd, PWD: o.cwd, TMPDIR: o.cwd, LANG: 'C.UTF-8', ...o.env };
  const r = await runChildProcess('/bin/sh', ['-c', command], { ...o, env });
  const output = { exit_code: r.exitCode, ...(r.signal ? { signal: r.signal } : {}), stdout: r.stdout, stderr: r.stderr, ...(r.timedOut ? { timed_out: true } : {}) };
  if (r.spawnError) return { success: false, output, error: `Could not start the command: ${r.spawnError.message}` };
  if (r.timedOut) return { success: false, output, error: `Command timed out after ${o.timeoutMs} ms and was killed` };
  if (r.cancelled) return { success: false, output, error: 'Command cancelled' };
  return { success: r.exitCode === 0, output, ...(r.exitCode === 0 ? {} : { error: `Command exited with ${r.exitCode ?? r.signal}` }) };
}
