import { compileGlob } from './workspace-glob.js';

describe('compileGlob', () => {
  it.each([
    ['*.py', ['a.py', '.hidden.py'], ['a.pyc', 'src/a.py']],
    ['**/*.csv', ['x.csv', 'outputs/deep/x.csv'], ['x.csvx', 'outputs/x.txt']],
    ['**', ['a', 'a/b/c.txt'], []],
    ['outputs/**', ['outputs/a.md', 'outputs/deep/b.md'], ['files/a.md', 'outputs']],
    ['src/**/test?.ts', ['src/test1.ts', 'src/a/b/testX.ts'], ['src/test10.ts', 'lib/test1.ts']],
    ['*.{ts,js}', ['a.ts', 'b.js'], ['c.tsx', 'd.css']],
    ['{src,lib/{a,b}}/*.ts', ['src/x.ts', 'lib/a/x.ts', 'lib/b/y.ts'], ['lib/c/x.ts', 'lib/x.ts']],
    ['[a-c]*.txt', ['a.txt', 'cat.txt'], ['d.txt']],
    ['[!a-c]*.txt', ['d.txt'], ['a.txt', '/x.txt']],
    ['[]x].md', ['].md', 'x.md'], ['y.md']],
    ['report (v1) [draft].md', ['report (v1) d.md'], ['report (v1) [draft].md']],
    ['report (v1) \\[draft].md', ['report (v1) [draft].md'], []],
    ['a\\*b', ['a*b'], ['axb']],
    ['{unclosed', ['{unclosed'], ['unclosed']],
    ['a.b+c', ['a.b+c'], ['aXb+c', 'a.bbc']],
    ['données/*.txt', ['données/é.txt'], ['donnees/e.txt']],
  ])('%s', (glob, matching, other) => {
    const matcher = compileGlob(glob);
    for (const p of matching) expect([p, matcher.test(p)]).toEqual([p, true]);
    for (const p of other) expect([p, matcher.test(p)]).toEqual([p, false]);
  });

  it('refuses an over-long glob and one RE2 cannot compile', () => {
    expect(() => compileGlob('*'.repeat(1_001))).toThrow(expect.objectContaining({ code: 'bad_pattern', message: expect.stringContaining('at most 1000') }));
    expect(() => compileGlob('[z-a]')).toThrow(expect.objectContaining({ code: 'bad_pattern', message: expect.stringContaining('invalid glob') }));
  });
});
