import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repositoryRoot } from './repository-root.js';

describe('repositoryRoot', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'da-root-'));
    mkdirSync(join(dir, 'repo', 'dist', 'apps', 'gateway', 'src', 'web'), { recursive: true });
    writeFileSync(join(dir, 'repo', 'package.json'), '{}');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds the package.json above a bundle in dist/ and above a module deep in dist/apps/', () => {
    expect(repositoryRoot(pathToFileURL(join(dir, 'repo', 'dist', 'gateway.js')).href)).toBe(join(dir, 'repo'));
    expect(repositoryRoot(pathToFileURL(join(dir, 'repo', 'dist', 'apps', 'gateway', 'src', 'web', 'web-ui.js')).href)).toBe(join(dir, 'repo'));
  });

  it('finds this checkout from its own sources', () => {
    expect(repositoryRoot()).toBe(join(import.meta.dirname, '..', '..', '..', '..'));
  });
});
