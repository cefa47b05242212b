import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { runBundle } from './compiled-bundle.js';

/** A CommonJS bundle that writes what it was given beside itself. */
const bundle = (tag: string) =>
  `require('node:fs').writeFileSync(__dirname + '/seen.json', JSON.stringify({ tag: ${JSON.stringify(tag)}, dirname: __dirname, filename: __filename, exportsIsModuleExports: exports === module.exports }));\n${'function f(x) { return x * 2; }\n'.repeat(200)}`;
const hashOf = (source: string) => createHash('sha256').update(source).digest('hex').slice(0, 16);
const saved = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('runBundle', () => {
  let dir: string;
  let file: string;
  let cache: string;
  const seen = () => JSON.parse(readFileSync(join(dir, 'seen.json'), 'utf8')) as Record<string, unknown>;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'da-bundle-'));
    file = join(dir, 'app.cjs');
    cache = join(dir, 'cache');
    writeFileSync(file, bundle('first'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('runs the bundle as CommonJS, with its own require, __dirname and __filename', () => {
    expect(runBundle(file, { cacheDir: null })).toBe('none');
    expect(seen()).toEqual({ tag: 'first', dirname: dir, filename: file, exportsIsModuleExports: true });
  });

  it('saves the compiled code after the start, and the next start uses it', async () => {
    expect(runBundle(file, { cacheDir: cache, saveAfterMs: 0 })).toBe('none');
    await saved();
    expect(readdirSync(cache)).toEqual([expect.stringMatching(/^app\.cjs-[0-9a-f]{16}-v\d+\.\d+\.\d+-\w+\.v8$/)]);
    expect(runBundle(file, { cacheDir: cache, saveAfterMs: 0 })).toBe('used');
    expect(seen()).toMatchObject({ tag: 'first' });
  });

  it('compiles another source of the same length anew (V8 itself checks only the length)', async () => {
    runBundle(file, { cacheDir: cache, saveAfterMs: 0 });
    await saved();
    writeFileSync(file, bundle('other'));
    expect(runBundle(file, { cacheDir: cache, saveAfterMs: 0 })).toBe('none');
    expect(seen()).toMatchObject({ tag: 'other' });
  });

  it('compiles again over a cache V8 refuses, and replaces it', async () => {
    // A source this process has not compiled yet (V8 keeps what it compiled, and would not look at the cache).
    runBundle(file, { cacheDir: cache, saveAfterMs: 0 });
    await saved();
    const [name] = readdirSync(cache);
    writeFileSync(file, bundle('fresh'));
    const fresh = name!.replace(/-[0-9a-f]{16}-/, `-${hashOf(readFileSync(file, 'utf8'))}-`);
    writeFileSync(join(cache, fresh), 'not compiled code');
    expect(runBundle(file, { cacheDir: cache, saveAfterMs: 0 })).toBe('rejected');
    expect(seen()).toMatchObject({ tag: 'fresh' });
    await saved();
    expect(readFileSync(join(cache, fresh), 'utf8')).not.toBe('not compiled code');
  });

  it('keeps one cache per bundle: a new build replaces the last one', async () => {
    runBundle(file, { cacheDir: cache, saveAfterMs: 0 });
    await saved();
    writeFileSync(file, bundle('a longer source than before'));
    runBundle(file, { cacheDir: cache, saveAfterMs: 0 });
    await saved();
    expect(readdirSync(cache)).toHaveLength(1);
    expect(runBundle(file, { cacheDir: cache, saveAfterMs: 0 })).toBe('used');
  });

  it('does not read a cache file others may write, in its own folder', async () => {
    runBundle(file, { cacheDir: cache, saveAfterMs: 0 });
    await saved();
    chmodSync(join(cache, readdirSync(cache)[0]!), 0o666);
    expect(runBundle(file, { cacheDir: cache, saveAfterMs: 0 })).toBe('none');
  });

  it('neither reads nor writes a cache folder others may write', async () => {
    runBundle(file, { cacheDir: cache, saveAfterMs: 0 });
    await saved();
    chmodSync(cache, 0o777);
    expect(runBundle(file, { cacheDir: cache, saveAfterMs: 0 })).toBe('none');
    writeFileSync(file, bundle('changed'));
    runBundle(file, { cacheDir: cache, saveAfterMs: 0 });
    await saved();
    expect(readdirSync(cache)).toHaveLength(1);
  });
});
