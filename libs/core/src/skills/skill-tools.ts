import type { Caller } from '../auth/caller.js';
import type { Tool, ToolResult } from '../tools/tool.js';
import type { Workspace } from '../workspace/workspace.js';
import { writeRoom } from '../workspace/workspace-room.js';
import type { Skill, SkillCatalog } from './skill-catalog.js';
import { SkillScriptError, type SkillsSandboxExecutor } from './skills-sandbox-executor.js';

export const READ_SKILL_TOOL = 'read_skill';
export const RUN_SKILL_TOOL = 'run_skill';

export interface SkillToolsOptions {
  /** Ask a person before each `run_skill` call. Default false. */
  requireApproval?: boolean;
  /** Per-run limit passed to the executor; its own default applies when absent. */
  timeoutMs?: number;
  /** Per-run output cap passed to the executor; its own default applies when absent. */
  maxOutputBytes?: number;
}

/**
 * The `read_skill` and `run_skill` tools over a {@link SkillCatalog}.
 * Scripts run through `executor` in the workspace `workspaceFor` gives the calling user.
 * @returns `[read_skill, run_skill]`.
 */
export function createSkillTools(
  catalog: SkillCatalog,
  executor: SkillsSandboxExecutor,
  workspaceFor: (caller: Caller) => Workspace,
  options: SkillToolsOptions = {},
): Tool[] {
  const known = () => catalog.list().map((s) => s.name).join(', ') || 'none';
  const unknownSkill = (name: unknown): ToolResult => ({ success: false, output: null, error: `Unknown skill "${String(name)}". Available skills: ${known()}` });

  const readSkill: Tool = {
    name: READ_SKILL_TOOL,
    readOnly: true,
    description: 'Read a skill\'s instructions (its SKILL.md) and the scripts it offers. Do this before using a skill.',
    parameters: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, maxLength: 64, description: 'Skill name, as listed in the system prompt' } },
      required: ['name'],
      additionalProperties: false,
    },
    async execute(args): Promise<ToolResult> {
      const skill = catalog.get(String(args.name));
      if (!skill) return unknownSkill(args.name);
      return { success: true, output: { name: skill.name, description: skill.description, instructions: skill.body, scripts: skill.scripts } };
    },
  };

  const runSkill: Tool = {
    name: RUN_SKILL_TOOL,
    description:
      'Run one of a skill\'s scripts with arguments (no shell: each argument is passed as is). It runs in your workspace root, so give workspace-relative paths such as files/report.csv.',
    parameters: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 64, description: 'Skill name' },
        script: { type: 'string', minLength: 1, maxLength: 256, description: 'Script path as listed by read_skill, relative to the skill\'s scripts/ folder' },
        args: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 4096 }, description: 'Arguments for the script' },
      },
      required: ['name', 'script'],
      additionalProperties: false,
    },
    sensitive: options.requireApproval ?? false,
    // The executor's own timeout reports partial output; the dispatcher's is only a backstop.
    timeoutMs: executor.maxRunMs(options.timeoutMs) + 1_000,
    async execute(args, ctx): Promise<ToolResult> {
      const skill = catalog.get(String(args.name));
      if (!skill) return unknownSkill(args.name);
      const script = scriptName(skill, String(args.script));
      const workspace = workspaceFor(ctx.caller);
      try {
        const workspaceRoot = await workspace.ensure();
        const r = await executor.run(skill, script, (args.args as string[] | undefined) ?? [], {
          workspaceRoot,
          signal: ctx.signal,
          caller: ctx.caller,
          // A script's writes count against the quota like the file tools' (see the shell tool).
          writeRoom: await writeRoom(workspace),
          ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
          ...(options.maxOutputBytes !== undefined ? { maxOutputBytes: options.maxOutputBytes } : {}),
        });
        const output = { exit_code: r.exitCode, stdout: r.stdout, stderr: r.stderr, ...(r.timedOut ? { timed_out: true } : {}), ...(r.truncated ? { truncated: true } : {}) };
        if (r.timedOut) return { success: false, output, error: `Script ${skill.name}/${script} timed out and was killed` };
        if (r.cancelled) return { success: false, output, error: 'Script cancelled' };
        if (r.exitCode !== 0) return { success: false, output, error: `Script ${skill.name}/${script} exited with ${r.exitCode ?? 'a signal'}${r.limitHit ? `: ${r.limitHit}` : ''}` };
        return { success: true, output };
      } catch (err) {
        if (!(err instanceof SkillScriptError)) throw err;
        const scripts = skill.scripts.length > 0 ? ` Scripts of "${skill.name}": ${skill.scripts.join(', ')}` : '';
        return { success: false, output: { error_code: err.code }, error: `${err.message}.${scripts}` };
      } finally {
        workspace.invalidateUsage();
      }
    },
  };

  return [readSkill, runSkill];
}

/** Models often write `scripts/x.sh` for the listed `x.sh`; accept that spelling. */
function scriptName(skill: Skill, script: string): string {
  const bare = script.startsWith('scripts/') ? script.slice('scripts/'.length) : script;
  return !skill.scripts.includes(script) && skill.scripts.includes(bare) ? bare : script;
}
