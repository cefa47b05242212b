import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ModelCallState } from '../engine/agent-middleware.js';
import { SkillCatalog } from './skill-catalog.js';
import { SkillsMiddleware } from './skills-middleware.js';

describe('SkillsMiddleware', () => {
  let dir: string;
  const state = (messages: ModelCallState['messages']): ModelCallState => ({ sessionId: 's', runId: 'r', iteration: 1, messages, tools: [] });

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'skills-mw-'));
    for (const [name, description] of [
      ['text-stats', 'Count lines and words'],
      ['csv-tools', 'Split and join CSV files'],
    ]) {
      await mkdir(path.join(dir, name));
      await writeFile(path.join(dir, name, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\n---\nsecret instructions of ${name}\n`);
    }
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('appends each skill name and description and how to use them to the system message', async () => {
    const middleware = new SkillsMiddleware(await SkillCatalog.load(dir));
    const system = { role: 'system' as const, content: 'You are helpful.' };
    const s = state([system, { role: 'user', content: 'hi' }]);
    await middleware.beforeModel(s);
    const prompt = s.messages[0]!.content;
    expect(prompt.startsWith('You are helpful.\n\n## Skills\n')).toBe(true);
    expect(prompt).toContain('- csv-tools: Split and join CSV files');
    expect(prompt).toContain('- text-stats: Count lines and words');
    expect(prompt).toContain('`read_skill`');
    expect(prompt).toContain('`run_skill`');
    // Instructions stay out until read_skill is called.
    expect(prompt).not.toContain('secret instructions');
    // The run's own message object is not mutated (it is reused on the next iteration).
    expect(system.content).toBe('You are helpful.');
    expect(s.messages).toHaveLength(2);
  });

  it('adds a system message when there is none, and nothing when there are no skills', async () => {
    const s = state([{ role: 'user', content: 'hi' }]);
    await new SkillsMiddleware(await SkillCatalog.load(dir)).beforeModel(s);
    expect(s.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('## Skills') });

    await mkdir(path.join(dir, 'none'));
    const empty = state([{ role: 'system', content: 'base' }]);
    await new SkillsMiddleware(await SkillCatalog.load(path.join(dir, 'none'))).beforeModel(empty);
    expect(empty.messages).toEqual([{ role: 'system', content: 'base' }]);
  });
});
