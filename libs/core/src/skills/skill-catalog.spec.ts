import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseFrontMatter, SkillCatalog } from './skill-catalog.js';

const repoSkills = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../skills');

describe('SkillCatalog', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'skill-catalog-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function skill(folder: string, skillMd: string, scripts: Record<string, string> = {}): Promise<void> {
    await mkdir(path.join(dir, folder), { recursive: true });
    await writeFile(path.join(dir, folder, 'SKILL.md'), skillMd);
    for (const [name, body] of Object.entries(scripts)) {
      await mkdir(path.dirname(path.join(dir, folder, 'scripts', name)), { recursive: true });
      await writeFile(path.join(dir, folder, 'scripts', name), body, { mode: 0o755 });
    }
  }

  it('loads a valid skill with its body and scripts', async () => {
    await skill('csv-tools', '---\nname: csv-tools\ndescription: "Work with CSV: split, join"\nlicense: MIT # a comment\n---\n# CSV\n\nUse split.sh.\n', {
      'split.sh': '#!/bin/sh\n',
      'lib/helpers.sh': '',
    });
    const catalog = await SkillCatalog.load(dir);
    expect(catalog.warnings).toEqual([]);
    expect(catalog.list().map((s) => s.name)).toEqual(['csv-tools']);
    expect(catalog.get('csv-tools')).toMatchObject({
      name: 'csv-tools',
      description: 'Work with CSV: split, join',
      dir: path.join(dir, 'csv-tools'),
      body: '# CSV\n\nUse split.sh.',
      scripts: ['lib/helpers.sh', 'split.sh'],
      metadata: { license: 'MIT' },
    });
    expect(catalog.get('nope')).toBeUndefined();
  });

  it('skips invalid skills with a warning each and keeps the valid ones', async () => {
    await skill('good', '---\nname: good\ndescription: fine\n---\nbody');
    await skill('no-front', '# Just markdown\n');
    await skill('Bad_Name', '---\nname: Bad_Name\ndescription: x\n---\n');
    await skill('elsewhere', '---\nname: other\ndescription: x\n---\n');
    await skill('no-desc', '---\nname: no-desc\n---\n');
    await skill('unclosed', '---\nname: unclosed\ndescription: x\n');
    await skill('folded', '---\nname: folded\ndescription: >\n  long text\n---\n');
    await mkdir(path.join(dir, 'empty-folder'));
    const catalog = await SkillCatalog.load(dir);
    expect(catalog.list().map((s) => s.name)).toEqual(['good']);
    const warnings = catalog.warnings.join('\n');
    expect(catalog.warnings).toHaveLength(7);
    expect(warnings).toContain('no-front: SKILL.md: no front matter');
    expect(warnings).toContain('Bad_Name: SKILL.md: name "Bad_Name" must be lowercase');
    expect(warnings).toContain('elsewhere: SKILL.md: name "other" differs from its folder name');
    expect(warnings).toContain('no-desc: SKILL.md: front matter has no "description"');
    expect(warnings).toContain('unclosed: SKILL.md: front matter is not closed');
    expect(warnings).toContain('folded: SKILL.md: front matter line 3');
    expect(warnings).toContain('empty-folder: no SKILL.md');
  });

  it('reports a missing skills folder as a warning, not an error', async () => {
    const catalog = await SkillCatalog.load(path.join(dir, 'missing'));
    expect(catalog.list()).toEqual([]);
    expect(catalog.warnings[0]).toContain('cannot read the skills folder');
  });

  it('loads the sample skill shipped in skills/', async () => {
    const catalog = await SkillCatalog.load(repoSkills);
    expect(catalog.warnings).toEqual([]);
    expect(catalog.get('text-stats')).toMatchObject({ scripts: ['stats.sh'] });
  });
});

describe('parseFrontMatter', () => {
  it('reads plain, double- and single-quoted values', () => {
    expect(parseFrontMatter("---\na: plain text\nb: \"q\\\"uote\"\nc: 'it''s'\n---\nbody")).toEqual({ fields: { a: 'plain text', b: 'q"uote', c: "it's" }, body: 'body' });
  });

  it('refuses duplicate keys, lists and malformed lines', () => {
    expect(parseFrontMatter('---\na: 1\na: 2\n---\n')).toContain('"a" appears twice');
    expect(parseFrontMatter('---\na: [1, 2]\n---\n')).toContain('does not accept');
    expect(parseFrontMatter('---\njust text\n---\n')).toContain('expected "key: value"');
    expect(parseFrontMatter("---\na: 'open\n---\n")).toContain('does not accept');
  });
});
