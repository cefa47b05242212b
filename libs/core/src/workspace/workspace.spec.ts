import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { link, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sanitiseId, Workspace, workspaceRootFor } from './workspace.js';
import { WorkspaceHardLinkError, WorkspacePermissionError, WorkspaceQuotaError } from './workspace-errors.js';
import { WorkspaceRegistry } from './workspace-registry.js';

describe('Workspace', () => {
  let base: string;
  let outside: string;
  let ws: Workspace;

  beforeEach(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'ws-spec-'));
    outside = path.join(base, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'secret.txt'), 'top secret');
    ws = new Workspace('alice', { rootTemplate: path.join(base, 'workspaces/{user_id}') });
  });

  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('creates files/, uploads/ and outputs/ on first use', async () => {
    expect(existsSync(ws.root)).toBe(false);
    await ws.resolve('files/a.txt');
    for (const dir of ['files', 'uploads', 'outputs']) expect((await stat(path.join(ws.root, dir))).isDirectory()).toBe(true);
  });

  it('resolves relative paths and absolute paths inside the root', async () => {
    const real = await ws.ensure();
    await expect(ws.resolve('files/a.txt')).resolves.toBe(path.join(real, 'files/a.txt'));
    await expect(ws.resolve('files/../outputs/b.md')).resolves.toBe(path.join(real, 'outputs/b.md'));
    await expect(ws.resolve(path.join(ws.root, 'uploads/x.csv'))).resolves.toBe(path.join(real, 'uploads/x.csv'));
    await expect(ws.resolve('.')).resolves.toBe(real);
    // A literal percent sign that decodes to nothing dangerous is just a file name.
    await expect(ws.resolve('files/100%25 done.txt')).resolves.toBe(path.join(real, 'files/100%25 done.txt'));
  });

  it.each([
    ['..', 'parent'],
    ['../outside/secret.txt', 'dot-dot'],
    ['files/../../outside/secret.txt', 'dot-dot after a folder'],
    ['../alice-evil/x', 'sibling with a shared prefix'],
    ['/etc/passwd', 'absolute path elsewhere'],
    ['%2e%2e%2foutside%2fsecret.txt', 'URL-encoded ../'],
    ['%2E%2E/outside/secret.txt', 'URL-encoded dots'],
    ['%252e%252e%252foutside', 'double-encoded ../'],
    ['%25252e%25252e%25252f', 'triple-encoded ../'],
    ['files/%2e%2e/%2e%2e/%2e%2e/x', 'encoded dots deeper'],
    ['..%2f..%2fetc', 'mixed encoding'],
    ['..\\..\\outside', 'backslashes'],
    ['files/a\0.txt', 'NUL byte'],
    ['files/a%00.txt', 'encoded NUL byte'],
  ])('refuses %s (%s)', async (p) => {
    await expect(ws.resolve(p)).rejects.toThrow(WorkspacePermissionError);
  });

  it('refuses symlinks that lead out, also for files that do not exist yet behind them', async () => {
    const real = await ws.ensure();
    await symlink(outside, path.join(real, 'files/link-dir'));
    await symlink(path.join(outside, 'secret.txt'), path.join(real, 'files/link-file'));
    await symlink(path.join(outside, 'nope.txt'), path.join(real, 'files/dangling'));
    await symlink(path.join(outside, 'no-dir'), path.join(real, 'files/dangling-dir'));
    for (const p of ['files/link-dir', 'files/link-dir/secret.txt', 'files/link-dir/new/deeper.txt', 'files/link-file', 'files/dangling', 'files/dangling-dir/new.txt']) {
      await expect(ws.resolve(p)).rejects.toThrow(WorkspacePermissionError);
    }
    await expect(ws.writeFile('files/dangling', 'escape')).rejects.toThrow(WorkspacePermissionError);
    expect(existsSync(path.join(outside, 'nope.txt'))).toBe(false);
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
  });

  it('follows symlinks that stay inside', async () => {
    const real = await ws.ensure();
    await writeFile(path.join(real, 'files/target.txt'), 'x');
    await symlink(path.join(real, 'files/target.txt'), path.join(real, 'outputs/alias.txt'));
    await expect(ws.resolve('outputs/alias.txt')).resolves.toBe(path.join(real, 'outputs/alias.txt'));
  });

  it('refuses to read, write or change a regular file with more than one hard link, and leaves its other name alone', async () => {
    const real = await ws.ensure();
    const secret = path.join(outside, 'secret.txt');
    await link(secret, path.join(real, 'files/linked.txt'));
    const refused = { name: 'WorkspaceHardLinkError', code: 'workspace_permission_denied', links: 2, message: 'files/linked.txt: has 2 hard links; file tools refuse hard-linked files' };
    await expect(ws.readText('files/linked.txt')).rejects.toMatchObject(refused);
    await expect(ws.writeFile('files/linked.txt', 'overwritten')).rejects.toMatchObject(refused);
    await expect(ws.modifyText('files/linked.txt', () => 'changed')).rejects.toMatchObject(refused);
    await expect(ws.writeFile('files/linked.txt', 'x')).rejects.toThrow(WorkspaceHardLinkError);
    expect(await readFile(secret, 'utf8')).toBe('top secret');

    // Once the other name is gone, it is an ordinary file of the workspace again.
    await rm(secret);
    await expect(ws.readText('files/linked.txt')).resolves.toMatchObject({ text: 'top secret' });
    await expect(ws.writeFile('files/linked.txt', 'mine now')).resolves.toBe(path.join(real, 'files/linked.txt'));
  });

  it('refuses writes past the quota and counts overwrites by their growth', async () => {
    const small = new Workspace('bob', { rootTemplate: path.join(base, 'workspaces/{user_id}'), quotaBytes: 100 });
    await small.writeFile('files/a.txt', 'x'.repeat(60));
    await expect(small.writeFile('files/b.txt', 'y'.repeat(50))).rejects.toThrow(WorkspaceQuotaError);
    expect(existsSync(path.join(small.root, 'files/b.txt'))).toBe(false);
    await small.writeFile('files/a.txt', 'x'.repeat(90)); // grows by 30: 90 of 100
    await expect(small.usage()).resolves.toBe(90);
    await expect(small.modifyText('files/c.txt', () => 'z'.repeat(11))).rejects.toThrow(WorkspaceQuotaError);
    await small.writeFile('files/a.txt', ''); // shrinking always works
    await small.writeFile('files/b.txt', 'y'.repeat(50));
    await expect(small.usage()).resolves.toBe(50);
  });

  it('counts files already on disk and sees outside writes after invalidateUsage', async () => {
    const root = workspaceRootFor(path.join(base, 'workspaces/{user_id}'), 'carol');
    await mkdir(path.join(root, 'uploads'), { recursive: true });
    await writeFile(path.join(root, 'uploads/big.bin'), Buffer.alloc(80));
    const carol = new Workspace('carol', { rootTemplate: path.join(base, 'workspaces/{user_id}'), quotaBytes: 100 });
    await expect(carol.writeFile('files/x', 'x'.repeat(30))).rejects.toThrow(WorkspaceQuotaError);
    await rm(path.join(root, 'uploads/big.bin'));
    carol.invalidateUsage();
    await expect(carol.writeFile('files/x', 'x'.repeat(30))).resolves.toContain('files/x');
  });

  it('tells what a path is and lists folders through their descriptors, a socket and a symlink out included', async () => {
    const real = await ws.ensure();
    await ws.writeFile('files/a.txt', 'abc');
    await symlink(outside, path.join(real, 'files', 'out'));
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(path.join(real, 'files', 'sock'), resolve));
    try {
      await expect(ws.stat('files/a.txt')).resolves.toMatchObject({ type: 'file', size: 3 });
      await expect(ws.stat('files')).resolves.toMatchObject({ type: 'dir' });
      await expect(ws.stat('files/sock')).resolves.toMatchObject({ type: 'other' });
      await expect(ws.stat('files/none')).resolves.toBeNull();
      await expect(ws.stat('files/out/secret.txt')).rejects.toThrow(WorkspacePermissionError);
      const { entries } = await ws.list('files');
      expect(entries).toEqual([
        { name: 'a.txt', type: 'file', size: 3 },
        { name: 'out', type: 'symlink' },
        { name: 'sock', type: 'other' },
      ]);
      await expect(ws.list('files/out')).rejects.toThrow(WorkspacePermissionError);
      await expect(ws.list('files/a.txt')).rejects.toMatchObject({ code: 'not_a_directory' });
    } finally {
      server.close();
    }
  });

  it('serialises concurrent writes so they cannot overrun the quota together', async () => {
    const dave = new Workspace('dave', { rootTemplate: path.join(base, 'workspaces/{user_id}'), quotaBytes: 100 });
    const results = await Promise.allSettled([1, 2, 3, 4].map((i) => dave.writeFile(`files/${i}.txt`, 'x'.repeat(40))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    await expect(dave.usage()).resolves.toBe(80);
  });
});

describe('workspace roots', () => {
  it('gives each user a separate folder that a crafted id cannot leave', () => {
    const template = '/data/workspaces/{user_id}';
    expect(workspaceRootFor(template, 'alice')).toBe('/data/workspaces/alice');
    expect(workspaceRootFor(template, '..')).toBe('/data/workspaces/%2E%2E');
    expect(workspaceRootFor(template, '../bob')).toBe('/data/workspaces/%2E.%2Fbob');
    expect(workspaceRootFor(template, 'a/b')).not.toBe(workspaceRootFor(template, 'a_b'));
    expect(workspaceRootFor(template, 'a%2Fb')).not.toBe(workspaceRootFor(template, 'a/b'));
    expect(workspaceRootFor('/srv/{tenant_id}/{user_id}', 'u', 't1')).toBe('/srv/t1/u');
    expect(workspaceRootFor('/srv/ws', 'u')).toBe('/srv/ws/u');
    expect(sanitiseId('john.doe@example.com')).toBe('john.doe%40example.com');
    expect(sanitiseId('x'.repeat(500)).length).toBeLessThanOrEqual(128);
    expect(() => sanitiseId('')).toThrow(WorkspacePermissionError);
  });

  it('hands out one shared Workspace per user', () => {
    const registry = new WorkspaceRegistry({ rootTemplate: '/tmp/never-created/{user_id}' });
    const a = registry.forCaller({ tenantId: 't', userId: 'a' });
    expect(registry.forCaller({ tenantId: 't', userId: 'a' })).toBe(a);
    expect(registry.forCaller({ tenantId: 't', userId: 'b' })).not.toBe(a);
  });
});
