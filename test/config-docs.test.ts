import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * docs/configuration.md is generated from the `@Env` declarations (scripts/gen-config-docs.mjs).
 * Its `--check` mode regenerates it in memory and compares: a description, default or variable
 * changed in the code without `npm run docs:config` fails here, saying to run it.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SCRIPT = join(ROOT, 'scripts/gen-config-docs.mjs');

function check(root: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [SCRIPT, '--check', '--root', root], { encoding: 'utf8', timeout: 120_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('docs/configuration.md', () => {
  it('is what `npm run docs:config` writes from the @Env declarations', () => {
    const { status, output } = check(ROOT);
    if (status !== 0) throw new Error(output);
    expect(output).toBe('');
  }, 120_000);

  it('is reported stale, with the command to run, once a description in the code changes', () => {
    const copy = mkdtempSync(join(tmpdir(), 'dataagent-config-docs-'));
    try {
      for (const entry of ['apps', 'libs', 'docs']) {
        cpSync(join(ROOT, entry), join(copy, entry), { recursive: true, filter: (source) => !/[\\/](node_modules|dist)$/.test(source) });
      }
      symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
      const settings = join(copy, 'libs/core/src/config/settings.ts');
      const text = readFileSync(settings, 'utf8');
      expect(text).toContain('/** MySQL connections per process. */');
      writeFileSync(settings, text.replace('/** MySQL connections per process. */', '/** MySQL connections per worker or gateway process. */'));

      const { status, output } = check(copy);
      expect(status).toBe(1);
      expect(output).toContain('docs/configuration.md is stale');
      expect(output).toContain('MySQL connections per worker or gateway process.');
      expect(output).toContain('npm run docs:config');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }, 120_000);
});
