import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { NoSandbox, type Sandbox } from '../sandbox/sandbox.js';
import { runChildProcess, SAFE_PATH } from '../tools/builtin/child-process.js';
import type { Skill } from './skill-catalog.js';

export interface SkillsSandboxExecutorOptions {
  /** Default run time before the script's process group is killed. Default 60 s. */
  timeoutMs?: number;
  /** Default bytes of stdout and of stderr kept. Default 64 KiB. */
  maxOutputBytes?: number;
  /** Grace between SIGTERM and SIGKILL. Default 2 s. */
  killGraceMs?: number;
  /** Where scripts run; default none (the worker's own user and view of the host). */
  sandbox?: Sandbox;
}

export interface SkillRunOptions {
  /** The caller's workspace root (already created): the script's cwd and HOME. */
  workspaceRoot: string;
  /** Fires on cancel; the script is killed as on a timeout. */
  signal: AbortSignal;
  /** Whose script it is: the sandbox runs it as that user's OS user, within that tenant's CPU bound. */
  caller?: { tenantId: string; userId: string };
  /** Bytes the workspace's quota has room for: no file the script writes grows past it. */
  writeRoom?: number;
  timeoutMs?: number;
  maxOutputBytes?: number;
}

export interface SkillRunResult {
  /** Null when the script was ended by a signal. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  cancelled: boolean;
  /** True when stdout or stderr was cut at `maxOutputBytes`. */
  truncated: boolean;
  /** Set when a limit of the sandbox stopped the script or one of its processes, saying which. */
  limitHit?: string;
}

export type SkillScriptErrorCode = 'invalid_script_path' | 'script_not_found' | 'script_outside_skill' | 'script_not_executable' | 'invalid_arguments' | 'spawn_failed';

/** A script that was refused or could not be started; nothing ran. */
export class SkillScriptError extends Error {
  constructor(readonly code: SkillScriptErrorCode, message: string) {
    super(message);
    this.name = 'SkillScriptError';
  }
}

const MAX_ARGS = 100;
const MAX_ARG_CHARS = 4096;

const isInside = (root: string, p: string) => p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);

/**
 * Runs a skill's scripts: only executables inside the skill's `scripts/` folder, started
 * directly (no shell) with the arguments as argv, in the caller's workspace root, with an
 * environment of PATH, HOME (the workspace) and LANG only, a timeout that kills the whole
 * process group and capped output. In the sandbox (bubblewrap) the script sees its skill's
 * folder read-only, the workspace and the system's runtime, and nothing else of the host;
 * with no sandbox it runs as the worker's OS user. Skill folders are installed by an operator;
 * the model only picks a script and its arguments.
 */
export class SkillsSandboxExecutor {
  private readonly timeoutMs: number;
  private readonly maxOutputBytes: number;
  private readonly killGraceMs: number;
  /** Where scripts run. */
  readonly sandbox: Sandbox;

  constructor(options: SkillsSandboxExecutorOptions = {}) {
    this.sandbox = options.sandbox ?? new NoSandbox();
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.maxOutputBytes = options.maxOutputBytes ?? 64 * 1024;
    this.killGraceMs = options.killGraceMs ?? 2_000;
  }

  /** The longest a run with `timeoutMs` (default: the executor's) can take, kill grace included. */
  maxRunMs(timeoutMs = this.timeoutMs): number {
    return timeoutMs + this.killGraceMs;
  }

  /**
   * Maps `script` (relative to the skill's `scripts/`) to the real path of an executable file
   * inside that folder.
   * @throws SkillScriptError for absolute paths, `..`, symlinks leading out, missing or
   * non-executable files.
   */
  async resolveScript(skill: Skill, script: string): Promise<string> {
    if (typeof script !== 'string' || !script) throw new SkillScriptError('invalid_script_path', 'script must be a non-empty path relative to the skill\'s scripts/ folder');
    if (script.includes('\0')) throw new SkillScriptError('invalid_script_path', 'script path contains a NUL byte');
    if (script.includes('\\')) throw new SkillScriptError('invalid_script_path', `${script}: use "/" as the separator`);
    if (path.posix.isAbsolute(script)) throw new SkillScriptError('invalid_script_path', `${script}: absolute paths are not allowed; name a file in the skill's scripts/ folder`);
    if (script.split('/').includes('..')) throw new SkillScriptError('invalid_script_path', `${script}: ".." is not allowed; name a file in the skill's scripts/ folder`);

    const scriptsDir = await realpath(path.join(skill.dir, 'scripts')).catch(() => null);
    if (!scriptsDir) throw new SkillScriptError('script_not_found', `skill "${skill.name}" has no scripts/ folder`);
    let real: string;
    try {
      real = await realpath(path.join(scriptsDir, script));
    } catch {
      throw new SkillScriptError('script_not_found', `skill "${skill.name}" has no script "${script}"`);
    }
    if (!isInside(scriptsDir, real)) throw new SkillScriptError('script_outside_skill', `${script}: leads outside the skill's scripts/ folder`);
    if (!(await stat(real)).isFile()) throw new SkillScriptError('script_not_found', `${script}: is not a file`);
    try {
      await access(real, constants.X_OK);
    } catch {
      throw new SkillScriptError('script_not_executable', `${script}: is not executable (chmod +x it in the skill folder)`);
    }
    return real;
  }

  /**
   * Runs one of the skill's scripts with `args` and waits for it to end.
   * @returns exit code, captured output and whether it timed out, was cancelled or truncated.
   * @throws SkillScriptError when the script is refused or cannot be started.
   */
  async run(skill: Skill, script: string, args: readonly string[], options: SkillRunOptions): Promise<SkillRunResult> {
    if (!Array.isArray(args) || args.length > MAX_ARGS) throw new SkillScriptError('invalid_arguments', `args must be a list of at most ${MAX_ARGS} strings`);
    for (const arg of args) {
      if (typeof arg !== 'string' || arg.length > MAX_ARG_CHARS || arg.includes('\0')) {
        throw new SkillScriptError('invalid_arguments', `each argument must be a string of at most ${MAX_ARG_CHARS} characters without NUL bytes`);
      }
    }
    const file = await this.resolveScript(skill, script);
    const skillDir = await realpath(skill.dir);
    const user = options.caller ? this.sandbox.userFor?.(options.caller.tenantId, options.caller.userId) : undefined;
    const command = {
      command: file,
      args,
      env: { PATH: SAFE_PATH, HOME: options.workspaceRoot, LANG: 'C.UTF-8' },
      workspace: options.workspaceRoot,
      readOnly: [skillDir],
      ...(user ? { user } : {}),
      ...(options.caller ? { tenantId: options.caller.tenantId } : {}),
      ...(options.writeRoom !== undefined ? { writeRoom: options.writeRoom } : {}),
    };
    const outcome = await runChildProcess(command, {
      timeoutMs: options.timeoutMs ?? this.timeoutMs,
      maxOutputBytes: options.maxOutputBytes ?? this.maxOutputBytes,
      killGraceMs: this.killGraceMs,
      signal: options.signal,
    }, this.sandbox);
    if (outcome.spawnError) {
      const hint = (outcome.spawnError as NodeJS.ErrnoException).code === 'ENOEXEC' ? '; does it begin with a "#!" line?' : '';
      throw new SkillScriptError('spawn_failed', `${script}: could not start (${outcome.spawnError.message})${hint}`);
    }
    return {
      exitCode: outcome.exitCode,
      stdout: outcome.stdout,
      stderr: outcome.stderr,
      timedOut: outcome.timedOut,
      cancelled: outcome.cancelled,
      truncated: outcome.truncated,
      ...(outcome.limitHit ? { limitHit: outcome.limitHit } : {}),
    };
  }
}
