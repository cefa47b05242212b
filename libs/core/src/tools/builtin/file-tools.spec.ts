import { link, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { applyPatch } from 'diff';
import { FileOperationEvent, type ExecutionEvent } from '../../events/execution-event.js';
import type { Caller } from '../../auth/caller.js';
import { WorkspaceRegistry } from '../../workspace/workspace-registry.js';
import type { Tool, ToolContext } from '../tool.js';
import { createFileTools } from './file-tools.js';

const alice: Caller = { tenantId: 't1', userId: 'alice', role: 'user' };
const bob: Caller = { tenantId: 't1', userId: 'bob', role: 'user' };

describe('file tools', () => {
  let base: string;
  let registry: WorkspaceRegistry;
  let tools: Map<string, Tool>;
  let events: ExecutionEvent[];

  const ctx = (caller: Caller = alice): ToolContext => ({
    caller,
    sessionId: 's1',
    runId: 'r1',
    toolCallId: 'c1',
    signal: new AbortController().signal,
    emit: (build) => events.push(build({ sessionId: 's1', runId: 'r1' })),
  });
  const call = (name: string, args: Record<string, unknown>, caller?: Caller) => tools.get(name)!.execute(args, ctx(caller));

  beforeEach(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'file-tools-'));
    registry = new WorkspaceRegistry({ rootTemplate: path.join(base, 'ws/{user_id}'), quotaBytes: 1_000 });
    tools = new Map(createFileTools((caller) => registry.forCaller(caller)).map((t) => [t.name, t]));
    events = [];
    await mkdir(path.join(base, 'outside'));
    await writeFile(path.join(base, 'outside/secret.txt'), 'password=hunter2\n');
  });

  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('marks only write_file and edit_file sensitive', () => {
    expect([...tools.values()].filter((t) => t.sensitive).map((t) => t.name)).toEqual(['write_file', 'edit_file']);
  });

  it('writes a file and emits a file_operation event with its diff', async () => {
    const result = await call('write_file', { path: 'outputs/report.md', content: '# Title\nbody\n' });
    expect(result).toMatchObject({ success: true });
    expect(await readFile(path.join(registry.forCaller(alice).root, 'outputs/report.md'), 'utf8')).toBe('# Title\nbody\n');
    expect(events).toHaveLength(1);
    expect(events[0]).toBeInstanceOf(FileOperationEvent);
    expect(events[0]!.toDict()).toMatchObject({
      event_type: 'file_operation',
      operation: 'create',
      path: 'outputs/report.md',
      diff: '--- /dev/null\n+++ b/outputs/report.md\n@@ -0,0 +1,2 @@\n+# Title\n+body\n',
      stats: { additions: 2, deletions: 0 },
    });

    await call('write_file', { path: 'outputs/report.md', content: '# Title\nnew body\n' });
    expect(events[1]!.toDict()).toMatchObject({ operation: 'write', stats: { additions: 1, deletions: 1 } });
  });

  it('edits by exact replacement, with a diff that reproduces the change', async () => {
    const before = 'alpha\nbeta\ngamma\nbeta\n';
    await call('write_file', { path: 'files/a.txt', content: before });
    events = [];

    const ambiguous = await call('edit_file', { path: 'files/a.txt', old_string: 'beta', new_string: 'BETA' });
    expect(ambiguous).toMatchObject({ success: false, error: expect.stringContaining('2 times') });
    const missing = await call('edit_file', { path: 'files/a.txt', old_string: 'delta', new_string: 'x' });
    expect(missing).toMatchObject({ success: false, error: expect.stringContaining('not found') });
    const noFile = await call('edit_file', { path: 'files/none.txt', old_string: 'a', new_string: 'b' });
    expect(noFile).toMatchObject({ success: false });
    expect(events).toHaveLength(0);

    const unique = await call('edit_file', { path: 'files/a.txt', old_string: 'gamma\nbeta', new_string: 'gamma\nbeta$&' });
    expect(unique).toMatchObject({ success: true });
    const file = path.join(registry.forCaller(alice).root, 'files/a.txt');
    expect(await readFile(file, 'utf8')).toBe('alpha\nbeta\ngamma\nbeta$&\n'); // no $-pattern expansion

    const all = await call('edit_file', { path: 'files/a.txt', old_string: 'beta', new_string: 'BETA', replace_all: true });
    expect(all).toMatchObject({ success: true, output: expect.stringContaining('2 replacements') });
    const after = await readFile(file, 'utf8');
    expect(after).toBe('alpha\nBETA\ngamma\nBETA$&\n');

    expect(events).toHaveLength(2);
    const diff = (events[1] as FileOperationEvent).diff;
    expect(applyPatch('alpha\nbeta\ngamma\nbeta$&\n', diff)).toBe(after);
    expect((events[1] as FileOperationEvent).stats).toEqual({ additions: 2, deletions: 2 });
  });

  it('reads numbered lines with offset and limit', async () => {
    await call('write_file', { path: 'files/n.txt', content: 'l1\nl2\nl3\nl4\n' });
    const page = await call('read_file', { path: 'files/n.txt', offset: 1, limit: 2 });
    expect(page.output).toBe('     2\tl2\n     3\tl3\n(1 more lines; continue with offset 3)');
    expect(await call('read_file', { path: 'files/n.txt', offset: 9 })).toMatchObject({ success: false });
    expect(await call('read_file', { path: 'files/none.txt' })).toMatchObject({ success: false, output: { error_code: 'not_found' } });
  });

  it('lists folders', async () => {
    const result = await call('ls', {});
    expect(result.output).toMatchObject({ path: '.', entries: [{ name: 'files', type: 'dir' }, { name: 'outputs', type: 'dir' }, { name: 'uploads', type: 'dir' }] });
  });

  it.each([
    ['read_file', { path: '../../outside/secret.txt' }],
    ['read_file', { path: '%2e%2e%2f%2e%2e%2foutside%2fsecret.txt' }],
    ['write_file', { path: '/tmp/escape.txt', content: 'x' }],
    ['edit_file', { path: '../bob/files/x', old_string: 'a', new_string: 'b' }],
    ['ls', { path: '..' }],
    ['glob', { pattern: '../**' }],
    ['glob', { pattern: '/**' }],
    ['glob', { pattern: '*', path: '../..' }],
    ['grep', { pattern: 'password', path: '../../outside' }],
    ['grep', { pattern: 'password', glob: '../**' }],
  ])('%s refuses a path outside the workspace: %j', async (name, args) => {
    const result = await call(name, args);
    expect(result).toMatchObject({ success: false, output: { error_code: 'workspace_permission_denied' } });
  });

  it('keeps glob and grep inside the workspace even with symlinks pointing out', async () => {
    const root = await registry.forCaller(alice).ensure();
    await symlink(path.join(base, 'outside'), path.join(root, 'files/out'));
    await symlink(path.join(base, 'outside/secret.txt'), path.join(root, 'files/secret-link.txt'));
    await call('write_file', { path: 'files/notes.txt', content: 'password is not here\n' });
    await call('write_file', { path: 'outputs/deep/x.csv', content: 'a,b\n' });

    const globbed = await call('glob', { pattern: '**/*' });
    expect(globbed.output).toEqual({ matches: ['files/notes.txt', 'outputs/deep/x.csv'] });
    expect((await call('glob', { pattern: '**/*.csv' })).output).toEqual({ matches: ['outputs/deep/x.csv'] });

    const grepped = await call('grep', { pattern: 'password' });
    expect(grepped.output).toBe('files/notes.txt:1: password is not here');
    expect((await call('grep', { pattern: 'hunter2', path: 'files/secret-link.txt' })).success).toBe(false);
  });

  describe('a hard link planted in the workspace (as a shell command can make one to another tenant\'s file)', () => {
    const refusal = (shown: string) => `${shown}: has 2 hard links; file tools refuse hard-linked files`;
    let secret: string;

    beforeEach(async () => {
      const root = await registry.forCaller(alice).ensure();
      secret = path.join(base, 'outside/secret.txt');
      await link(secret, path.join(root, 'files/stolen.txt'));
      await call('write_file', { path: 'files/notes.txt', content: 'password is not here\n' });
      events = [];
    });

    it.each([
      ['read_file', { path: 'files/stolen.txt' }],
      ['write_file', { path: 'files/stolen.txt', content: 'password=overwritten\n' }],
      ['edit_file', { path: 'files/stolen.txt', old_string: 'hunter2', new_string: 'changed' }],
      ['grep', { pattern: 'hunter2', path: 'files/stolen.txt' }],
    ])('%s refuses it, and the other name keeps its content', async (name, args) => {
      const result = await call(name, args);
      expect(result).toMatchObject({ success: false, output: { error_code: 'workspace_permission_denied' }, error: refusal('files/stolen.txt') });
      expect(await readFile(secret, 'utf8')).toBe('password=hunter2\n');
      expect(events).toHaveLength(0);
    });

    it('grep over a folder, with or without a glob filter, skips it and says so', async () => {
      const skipped = `(skipped ${refusal('files/stolen.txt')})`;
      expect((await call('grep', { pattern: 'password' })).output).toBe(`files/notes.txt:1: password is not here\n${skipped}`);
      expect((await call('grep', { pattern: 'hunter2', path: 'files', glob: '*.txt' })).output).toBe(`No matches\n${skipped}`);
      expect((await call('grep', { pattern: 'hunter2', glob: 'files/stolen.*' })).output).toBe(`No matches\n${skipped}`);
    });

    it('refuses a file linked twice inside the workspace too: the count is what it knows', async () => {
      const root = await registry.forCaller(alice).ensure();
      await link(path.join(root, 'files/notes.txt'), path.join(root, 'outputs/notes-again.txt'));
      expect(await call('read_file', { path: 'outputs/notes-again.txt' })).toMatchObject({ success: false, error: refusal('outputs/notes-again.txt') });
      expect(await call('read_file', { path: 'files/notes.txt' })).toMatchObject({ success: false, error: refusal('files/notes.txt') });
    });
  });

  it('greps with a regex, a file filter, case folding and a result cap', async () => {
    await call('write_file', { path: 'files/a.py', content: 'def f():\n    return 1\nDEF = 2\n' });
    await call('write_file', { path: 'files/b.md', content: 'def in markdown\n' });
    expect((await call('grep', { pattern: '^def', glob: '*.py' })).output).toBe('files/a.py:1: def f():');
    expect((await call('grep', { pattern: '^def', glob: '*.py', ignore_case: true })).output).toBe('files/a.py:1: def f():\nfiles/a.py:3: DEF = 2');
    expect((await call('grep', { pattern: 'def', ignore_case: true, max_results: 1 })).output).toBe('files/a.py:1: def f():\n(stopped at 1 matches)');
    expect(await call('grep', { pattern: '(' })).toMatchObject({ success: false, error: expect.stringContaining('invalid regular expression') });
  });

  it('greps with a linear-time engine: a catastrophic pattern answers at once and the process stays free', async () => {
    // A backtracking engine never returns from ^(a+)+$ on these lines, blocking the event loop,
    // so not even the test timeout could fire: a regression hangs this test.
    const root = await registry.forCaller(alice).ensure();
    await writeFile(path.join(root, 'files/long.txt'), `${'a'.repeat(50_000)}!\n${'a'.repeat(40)}!\naaaa\n${'x'.repeat(3_000)}needle\n`);
    expect((await call('grep', { pattern: '^(a+)+$' })).output).toBe('files/long.txt:3: aaaa');
    expect((await call('grep', { pattern: '(x+x+)+y', path: 'files/long.txt' })).output).toBe('No matches');
    // The whole line is searched, however long; the shown text is cut.
    expect((await call('grep', { pattern: 'needle' })).output).toBe(`files/long.txt:4: ${'x'.repeat(500)}…`);
  });

  it.each([
    ['a backreference', '(a)\\1'],
    ['a lookahead', 'foo(?=bar)'],
    ['a negative lookahead', 'foo(?!bar)'],
    ['a lookbehind', '(?<=a)b'],
    ['a negative lookbehind', '(?<!a)b'],
  ])('refuses %s with bad_pattern, naming the RE2 syntax', async (_what, pattern) => {
    const result = await call('grep', { pattern });
    expect(result).toMatchObject({ success: false, output: { error_code: 'bad_pattern' }, error: expect.stringContaining('RE2 syntax') });
  });

  it.each([
    ['grep', 'regular expression', { pattern: 'a'.repeat(1_001) }, 'regular expression is 1001 characters long'],
    ['grep', 'glob filter', { pattern: 'a', glob: '*'.repeat(1_001) }, 'glob is 1001 characters long'],
    ['glob', 'pattern', { pattern: `${'*/'.repeat(600)}x` }, 'glob is 1201 characters long'],
  ])('%s refuses an over-long %s', async (name, _what, args, message) => {
    const result = await call(name, args);
    expect(result).toMatchObject({ success: false, output: { error_code: 'bad_pattern' }, error: expect.stringContaining(message) });
    expect(result.error).toContain('at most 1000');
  });

  it('matches globs in linear time, in glob and in the grep filter', async () => {
    // minimatch backtracks on this pattern for longer than any test runs (and blocks the event loop).
    const root = await registry.forCaller(alice).ensure();
    await writeFile(path.join(root, `files/${'a'.repeat(200)}.txt`), 'aaa\n');
    const hostile = `${'*a'.repeat(12)}*b`;
    expect((await call('glob', { pattern: hostile })).output).toEqual({ matches: [] });
    expect((await call('grep', { pattern: 'a', glob: hostile })).output).toBe('No matches');
    expect((await call('glob', { pattern: `**/${'*a'.repeat(12)}*.txt` })).output).toEqual({ matches: [`files/${'a'.repeat(200)}.txt`] });
  });

  it('reads a long file in pages that fit in a tool result, each saying where to go on', async () => {
    const root = await registry.forCaller(alice).ensure();
    const lines = Array.from({ length: 2_000 }, (_, i) => `${i}:${'é'.repeat(999)}`);
    await writeFile(path.join(root, 'files/wide.txt'), `${lines.join('\n')}\n`); // ~4 MB
    const seen: string[] = [];
    let offset = 0;
    for (let pages = 0; pages < 1_000; pages++) {
      const page = String((await call('read_file', { path: 'files/wide.txt', offset })).output);
      expect(Buffer.byteLength(page)).toBeLessThanOrEqual(64 * 1024);
      const next = /\(page full at 63\.8 KB: \d+ more lines; continue with offset (\d+)\)$/.exec(page);
      seen.push(...page.split('\n').filter((l) => /^ *\d+\t/.test(l)).map((l) => l.split('\t')[1]!));
      if (!next) break;
      offset = Number(next[1]);
    }
    expect(seen).toEqual(lines);

    const small = createFileTools((caller) => registry.forCaller(caller), { resultMaxBytes: 8 * 1024 }).find((t) => t.name === 'read_file')!;
    const page = String((await small.execute({ path: 'files/wide.txt', offset: 10 }, ctx())).output);
    expect(Buffer.byteLength(page)).toBeLessThanOrEqual(8 * 1024);
    expect(page).toMatch(/^ +11\t10:é+\n +12\t11:é+\n.*continue with offset \d+\)$/s);
  });

  it('keeps users apart', async () => {
    await call('write_file', { path: 'files/private.txt', content: 'alice only\n' });
    expect(await call('read_file', { path: 'files/private.txt' }, bob)).toMatchObject({ success: false, output: { error_code: 'not_found' } });
    expect((await call('grep', { pattern: 'alice' }, bob)).output).toBe('No matches');
  });

  it('refuses writes past the quota and says so', async () => {
    const result = await call('write_file', { path: 'files/big.txt', content: 'x'.repeat(2_000) });
    expect(result).toMatchObject({ success: false, output: { error_code: 'workspace_quota_exceeded' }, error: expect.stringContaining('quota') });
    expect(events).toHaveLength(0);
  });
});
