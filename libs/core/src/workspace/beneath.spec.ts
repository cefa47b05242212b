import { constants } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Beneath, segments } from './beneath.js';
import { WorkspaceError, WorkspacePermissionError } from './workspace-errors.js';

describe('Beneath: opens names under one folder, never outside it', () => {
  let base: string;
  let root: string;
  let outside: string;
  let beneath: Beneath;
  const read = { kind: 'file', flags: constants.O_RDONLY } as const;
  const create = { kind: 'file', flags: constants.O_RDWR | constants.O_CREAT } as const;

  beforeEach(async () => {
    base = await realpath(await mkdtemp(path.join(tmpdir(), 'beneath-')));
    root = path.join(base, 'root');
    outside = path.join(base, 'outside');
    await mkdir(path.join(root, 'files', 'inner'), { recursive: true });
    await mkdir(outside);
    await writeFile(path.join(outside, 'secret.txt'), 'secret');
    await writeFile(path.join(root, 'files', 'inner', 'mine.txt'), 'mine');
    beneath = new Beneath(root, [path.join(base, 'alias')]);
  });

  afterEach(() => rm(base, { recursive: true, force: true }));

  const text = async (names: string[]) => {
    const handle = await beneath.open(names, read, names.join('/'));
    if (!handle) return null;
    try {
      return (await handle.readFile()).toString();
    } finally {
      await handle.close();
    }
  };

  it('reads a file, and answers null for a missing name or a file where a folder should be', async () => {
    await expect(text(['files', 'inner', 'mine.txt'])).resolves.toBe('mine');
    await expect(text(['files', 'nope.txt'])).resolves.toBeNull();
    await expect(text(['files', 'inner', 'mine.txt', 'below'])).resolves.toBeNull();
  });

  it('refuses a symlinked folder or file that leads outside, by absolute or relative target', async () => {
    await symlink(outside, path.join(root, 'files', 'abs'));
    await symlink('../../outside', path.join(root, 'files', 'rel'));
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'files', 'direct.txt'));
    for (const names of [
      ['files', 'abs', 'secret.txt'],
      ['files', 'rel', 'secret.txt'],
      ['files', 'direct.txt'],
    ]) {
      await expect(text(names)).rejects.toThrow(WorkspacePermissionError);
    }
    await expect(beneath.open(['files', 'abs', 'new.txt'], create, 'files/abs/new.txt')).rejects.toThrow(WorkspacePermissionError);
    await expect(readdir(outside)).resolves.toEqual(['secret.txt']);
  });

  it('follows a symlink whose target stays beneath, by relative, absolute or aliased target', async () => {
    await symlink('inner', path.join(root, 'files', 'rel'));
    await symlink(path.join(root, 'files', 'inner'), path.join(root, 'files', 'abs'));
    await symlink(path.join(base, 'alias', 'files', 'inner'), path.join(root, 'files', 'aliased'));
    for (const via of ['rel', 'abs', 'aliased']) await expect(text(['files', via, 'mine.txt'])).resolves.toBe('mine');
  });

  it('creates a dangling link\'s target only when it lies beneath', async () => {
    await symlink('inner/made.txt', path.join(root, 'files', 'dangling-in'));
    await symlink(path.join(outside, 'made.txt'), path.join(root, 'files', 'dangling-out'));
    await (await beneath.open(['files', 'dangling-in'], create, 'files/dangling-in'))!.close();
    await expect(readFile(path.join(root, 'files', 'inner', 'made.txt'), 'utf8')).resolves.toBe('');
    await expect(beneath.open(['files', 'dangling-out'], create, 'files/dangling-out')).rejects.toThrow(WorkspacePermissionError);
    await expect(readdir(outside)).resolves.toEqual(['secret.txt']);
  });

  it('gives up on a symlink loop', async () => {
    await symlink('b', path.join(root, 'files', 'a'));
    await symlink('a', path.join(root, 'files', 'b'));
    await expect(text(['files', 'a'])).rejects.toThrow(/too many levels of symbolic links/);
  });

  it('makes missing folders, handing each to the caller, and opens folders for listing', async () => {
    const made: string[] = [];
    const handle = await beneath.open(['files', 'x', 'y', 'new.txt'], create, 'files/x/y/new.txt', async (folder) => {
      made.push((await folder.stat()).isDirectory() ? 'dir' : 'other');
    });
    await handle!.close();
    expect(made).toEqual(['dir', 'dir']);
    const folder = await beneath.open(['files', 'x'], { kind: 'dir' }, 'files/x');
    expect((await folder!.stat()).isDirectory()).toBe(true);
    await folder!.close();
    await expect(beneath.open(['files', 'x', 'y', 'new.txt'], { kind: 'dir' }, 'files/x/y/new.txt')).rejects.toMatchObject({ code: 'not_a_directory' });
    await expect(beneath.open([], read, '.')).rejects.toThrow(WorkspaceError);
  });

  it('splits a relative path into names', () => {
    expect(segments('files//a/./b.txt')).toEqual(['files', 'a', 'b.txt']);
    expect(segments('')).toEqual([]);
  });
});
