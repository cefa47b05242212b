import { NoSandbox, type Sandbox, type SandboxedCommand } from '../../sandbox/sandbox.js';
import { writeRoom } from '../../workspace/workspace-room.js';
import type { Caller } from '../../auth/caller.js';
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
  /** Where commands run; default none (the worker's own user and view of the host). */
  sandbox?: Sandbox;
}

/**
 * The `shell` tool: runs `/bin/sh -c <command>` in the caller's workspace root with a scrubbed
 * environment, an output cap and a timeout that kills the whole process group. Always sensitive
 * (a person approves each command). Off by default: the server calls this factory only when
 * shell access is enabled. Confinement is the sandbox's: in bubblewrap the command sees only the
 * system's runtime, the workspace and a private /tmp, with no network; with no sandbox it runs
 * as the worker's OS user and can read what that user can.
 */
export function createShellTool(workspaceFor: (caller: Caller) => Workspace, options: ShellToolOptions = {}): Tool {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxOutputBytes = options.maxOutputBytes ?? 64 * 1024;
  const killGraceMs = options.killGraceMs ?? 2_000;
  const sandbox: Sandbox = options.sandbox ?? new NoSandbox();
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
        const user = sandbox.userFor?.(ctx.caller.tenantId, ctx.caller.userId);
        // Writes around the file tools count against the quota too: no file may grow past its room.
        const room = await writeRoom(workspace);
        return await runCommand(String(args.command), cwd, { ...options.env }, sandbox, { timeoutMs, maxOutputBytes, killGraceMs, signal: ctx.signal }, { tenantId: ctx.caller.tenantId, writeRoom: room, ...(user ? { user } : {}) });
      } finally {
        workspace.invalidateUsage();
      }
    },
  };
}

/** Runs `/bin/sh -c command` in `cwd`; `extraEnv` is added to the scrubbed base environment. */
async function runCommand(command: string, cwd: string, extraEnv: Record<string, string>, sandbox: Sandbox, o: ChildProcessOptions, whose: Pick<SandboxedCommand, 'user' | 'tenantId' | 'writeRoom'>): Promise<ToolResult> {
  // In bubblewrap /tmp is the sandbox's own; with no sandbox it is the host's, shared by everyone.
  const env = { PATH: SAFE_PATH, HOME: cwd, PWD: cwd, TMPDIR: sandbox.kind === 'bwrap' ? '/tmp' : cwd, LANG: 'C.UTF-8', ...extraEnv };
  const r = await runChildProcess({ command: '/bin/sh', args: ['-c', command], env, workspace: cwd, ...whose }, o, sandbox);
  const quota = sandbox.kind === 'bwrap' && whose.writeRoom !== undefined ? `; the workspace quota had room for ${whose.writeRoom} more bytes, and no file may grow past that` : '';
  const output = { exit_code: r.exitCode, ...(r.signal ? { signal: r.signal } : {}), stdout: r.stdout, stderr: r.stderr, ...(r.timedOut ? { timed_out: true } : {}), ...(r.limitHit ? { limit: r.limitHit } : {}), ...(quota && fileTooLarge(r) ? { limit: `a file reached its size limit${quota}` } : {}) };
  if (r.spawnError) return { success: false, output, error: `Could not start the command: ${r.spawnError.message}` };
  if (r.timedOut) return { success: false, output, error: `Command timed out after ${o.timeoutMs} ms and was killed` };
  if (r.cancelled) return { success: false, output, error: 'Command cancelled' };
  if (r.exitCode !== 0 && r.limitHit) return { success: false, output, error: `Command exited with ${r.exitCode ?? r.signal}: ${r.limitHit}` };
  return { success: r.exitCode === 0, output, ...(r.exitCode === 0 ? {} : { error: `Command exited with ${r.exitCode ?? r.signal}` }) };
}

/** Whether a command (or the shell running it, exit 128 + 25) was ended by SIGXFSZ: a file reached its size limit. */
function fileTooLarge(r: { exitCode: number | null; signal?: NodeJS.Signals | null }): boolean {
  return r.signal === 'SIGXFSZ' || r.exitCode === 153;
}
