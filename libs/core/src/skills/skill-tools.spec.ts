import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Caller } from '../auth/caller.js';
import type { Tool, ToolContext } from '../tools/tool.js';
import { WorkspaceRegistry } from '../workspace/workspace-registry.js';
import { SkillCatalog } from './skill-catalog.js';
import { createSkillTools } from './skill-tools.js';
import { SkillsSandboxExecutor } from './skills-sandbox-executor.js';

const repoSkills = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../skills');
const caller: Caller = { tenantId: 't', userId: 'u1', role: 'user' };
const ctx = (): ToolContext => ({ caller, sessionId: 's', runId: 'r', toolCallId: 'c', signal: new AbortController().signal, emit: () => undefined });

describe('skill tools', () => {
  let base: string;
  let registry: WorkspaceRegistry;
  let readSkill: Tool;
  let runSkill: Tool;

  beforeEach(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'skill-tools-'));
    registry = new WorkspaceRegistry({ rootTemplate: path.join(base, '{user_id}') });
    [readSkill, runSkill] = createSkillTools(await SkillCatalog.load(repoSkills), new SkillsSandboxExecutor(), (c) => registry.forCaller(c));
  });

  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('read_skill returns the instructions and scripts, or names the known skills', async () => {
    expect(await readSkill!.execute({ name: 'text-stats' }, ctx())).toMatchObject({
      success: true,
      output: { name: 'text-stats', instructions: expect.stringContaining('# Text statistics'), scripts: ['stats.sh'] },
    });
    expect(await readSkill!.execute({ name: 'nope' }, ctx())).toEqual({ success: false, output: null, error: 'Unknown skill "nope". Available skills: text-stats' });
  });

  it('run_skill runs the script in the caller\'s workspace', async () => {
    const root = await registry.forCaller(caller).ensure();
    await writeFile(path.join(root, 'files', 'a.txt'), 'hello world\n');
    expect(runSkill!.sensitive).toBe(false);
    expect(await runSkill!.execute({ name: 'text-stats', script: 'scripts/stats.sh', args: ['files/a.txt'] }, ctx())).toEqual({
      success: true,
      output: { exit_code: 0, stdout: 'files/a.txt: lines=1 words=2 bytes=12\n', stderr: '' },
    });
  });

  it('run_skill reports unknown skills, refused scripts and failures as unsuccessful results', async () => {
    expect(await runSkill!.execute({ name: 'nope', script: 'x' }, ctx())).toMatchObject({ success: false, error: expect.stringContaining('Unknown skill "nope"') });
    expect(await runSkill!.execute({ name: 'text-stats', script: '../../etc/passwd' }, ctx())).toMatchObject({
      success: false,
      output: { error_code: 'invalid_script_path' },
      error: expect.stringContaining('Scripts of "text-stats": stats.sh'),
    });
    expect(await runSkill!.execute({ name: 'text-stats', script: 'stats.sh', args: ['files/missing'] }, ctx())).toMatchObject({
      success: false,
      output: { exit_code: 1, stderr: 'files/missing: no such file\n' },
      error: 'Script text-stats/stats.sh exited with 1',
    });
  });

  it('marks run_skill sensitive when approval is required', async () => {
    const [, approved] = createSkillTools(await SkillCatalog.load(repoSkills), new SkillsSandboxExecutor(), (c) => registry.forCaller(c), { requireApproval: true });
    expect(approved!.sensitive).toBe(true);
  });
});
