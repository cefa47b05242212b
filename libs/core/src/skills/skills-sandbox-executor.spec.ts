import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SkillCatalog, type Skill } from './skill-catalog.js';
import { SkillScriptError, SkillsSandboxExecutor } from './skills-sandbox-executor.js';

const repoSkills = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../skills');

describe('SkillsSandboxExecutor', () => {
  let base: string;
  let workspaceRoot: string;
  let skill: Skill;
  const signal = new AbortController().signal;

  beforeEach(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'skills-sandbox-'));
    workspaceRoot = path.join(base, 'workspace');
    await mkdir(path.join(workspaceRoot, 'files'), { recursive: true });
    const scripts = path.join(base, 'skills', 'probe', 'scripts');
    await mkdir(scripts, { recursive: true });
    await writeFile(path.join(base, 'skills', 'probe', 'SKILL.md'), '---\nname: probe\ndescription: test scripts\n---\n');
    const script = async (name: string, body: string, mode = 0o755) => {
      await writeFile(path.join(scripts, name), body);
      await chmod(path.join(scripts, name), mode);
    };
    await script('env.sh', '#!/bin/sh\npwd\nenv\n');
    await script('sleep.sh', '#!/bin/sh\necho started\nsleep 30\n');
    await script('spam.sh', '#!/bin/sh\nyes | head -c 10000\n');
    await script('fail.sh', '#!/bin/sh\necho oops >&2\nexit 4\n');
    await script('plain.txt', 'not executable\n', 0o644);
    await writeFile(path.join(base, 'outside.sh'), '#!/bin/sh\necho escaped\n', { mode: 0o755 });
    await symlink(path.join(base, 'outside.sh'), path.join(scripts, 'link-out.sh'));
    const catalog = await SkillCatalog.load(path.join(base, 'skills'));
    skill = catalog.get('probe')!;
  });

  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('runs the sample text-stats script on a workspace file', async () => {
    await writeFile(path.join(workspaceRoot, 'files', 'notes.txt'), 'one two three\nfour\n');
    const textStats = (await SkillCatalog.load(repoSkills)).get('text-stats')!;
    const result = await new SkillsSandboxExecutor().run(textStats, 'stats.sh', ['files/notes.txt'], { workspaceRoot, signal });
    expect(result).toEqual({ exitCode: 0, stdout: 'files/notes.txt: lines=2 words=4 bytes=19\n', stderr: '', timedOut: false, cancelled: false, truncated: false });

    const refused = await new SkillsSandboxExecutor().run(textStats, 'stats.sh', ['../secret', 'files/missing'], { workspaceRoot, signal });
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain('../secret: give a path inside the workspace');
    expect(refused.stderr).toContain('files/missing: no such file');
  });

  it('runs in the workspace root with only PATH, HOME and LANG', async () => {
    process.env.OPENAI_API_KEY = 'sk-must-not-leak';
    process.env.DATAAGENT_SPEC_SECRET = 'also-secret';
    try {
      const result = await new SkillsSandboxExecutor().run(skill, 'env.sh', [], { workspaceRoot, signal });
      const [cwd, ...envLines] = result.stdout.trim().split('\n');
      expect(cwd).toBe(workspaceRoot);
      expect(result.stdout).not.toContain('sk-must-not-leak');
      expect(result.stdout).not.toContain('OPENAI_API_KEY');
      expect(result.stdout).not.toContain('DATAAGENT_');
      // sh adds PWD (and some add SHLVL) itself; nothing else comes from the worker.
      const names = envLines.map((l) => l.split('=')[0]).filter((n) => n !== 'PWD' && n !== 'SHLVL' && n !== '_');
      expect(names.sort()).toEqual(['HOME', 'LANG', 'PATH']);
      expect(envLines).toContain(`HOME=${workspaceRoot}`);
    } finally {
      delete process.env.OPENAI_API_KEY;
      delete process.env.DATAAGENT_SPEC_SECRET;
    }
  });

  it.each([
    ['../x', 'invalid_script_path'],
    ['../../outside.sh', 'invalid_script_path'],
    ['sub/../env.sh', 'invalid_script_path'],
    ['/bin/sh', 'invalid_script_path'],
    ['link-out.sh', 'script_outside_skill'],
    ['missing.sh', 'script_not_found'],
    ['plain.txt', 'script_not_executable'],
  ])('refuses script %s (%s) without running anything', async (script, code) => {
    const running = new SkillsSandboxExecutor().run(skill, script, [], { workspaceRoot, signal });
    await expect(running).rejects.toBeInstanceOf(SkillScriptError);
    await expect(running).rejects.toMatchObject({ code });
  });

  it('kills the script when it runs past its timeout', async () => {
    const executor = new SkillsSandboxExecutor({ timeoutMs: 200, killGraceMs: 200 });
    const started = Date.now();
    const result = await executor.run(skill, 'sleep.sh', [], { workspaceRoot, signal });
    expect(result).toMatchObject({ timedOut: true, exitCode: null, stdout: 'started\n' });
    // Far below the script's 30 s: the group was killed, not waited for.
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 15_000);

  it('stops the script when the run is cancelled', async () => {
    const controller = new AbortController();
    const running = new SkillsSandboxExecutor().run(skill, 'sleep.sh', [], { workspaceRoot, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(running).resolves.toMatchObject({ cancelled: true, timedOut: false });
  });

  it('caps output and reports a failing exit code', async () => {
    const executor = new SkillsSandboxExecutor();
    const spam = await executor.run(skill, 'spam.sh', [], { workspaceRoot, signal, maxOutputBytes: 100 });
    expect(spam.truncated).toBe(true);
    expect(spam.stdout.startsWith('y\n'.repeat(50))).toBe(true);
    expect(spam.stdout).toContain('9900 more bytes dropped');
    expect(await executor.run(skill, 'fail.sh', [], { workspaceRoot, signal })).toMatchObject({ exitCode: 4, stderr: 'oops\n' });
  });
});
