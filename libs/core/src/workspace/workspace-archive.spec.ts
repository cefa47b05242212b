import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findStaleWorkspaces, listWorkspaceFolders } from './stale-workspaces.js';
import { archiveWorkspace, inspectWorkspace, restoreWorkspace } from './workspace-archive.js';
import { WorkspaceError } from './workspace-errors.js';
import { Workspace } from './workspace.js';

const DAY = 86_400_000;
/** The fake clock: every age below is counted back from it (in the past, so real writes are newer). */
const NOW = Date.parse('2021-03-01T12:00:00Z');

/** Sets the mtime of a folder and everything inside it, deepest first. */
async function age(dir: string, at: number): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await age(full, at);
    else await utimes(full, new Date(at), new Date(at));
  }
  await utimes(dir, new Date(at), new Date(at));
}

/** A workspace folder as Workspace makes it (files/, uploads/, outputs/), with these files. */
async function workspace(dir: string, files: Record<string, string>): Promise<string> {
  for (const sub of ['files', 'uploads', 'outputs']) await mkdir(path.join(dir, sub), { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), text);
  }
  return dir;
}

describe('workspace archiving', () => {
  let base: string;
  let template: string;

  beforeEach(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'ws-archive-spec-'));
    template = path.join(base, '{tenant_id}', '{user_id}');
  });
  afterEach(() => rm(base, { recursive: true, force: true }));

  it('finds workspace folders by expanding the template placeholders as directory levels', async () => {
    await workspace(path.join(base, 'acme', 'alice'), { 'files/a.txt': 'a' });
    await workspace(path.join(base, 'acme', 'bob'), {});
    await workspace(path.join(base, 'globex', 'carol'), {});
    // An archive, a restore in progress, a symlink, and a folder without the workspace layout are no workspaces.
    await writeFile(path.join(base, 'acme', 'dave.tar.gz'), 'x');
    await workspace(path.join(base, 'acme', '.erin.restoring-abc'), {});
    await symlink(path.join(base, 'globex', 'carol'), path.join(base, 'acme', 'linked'));
    await mkdir(path.join(base, 'acme', 'not-a-workspace', 'files'), { recursive: true });
    expect(await listWorkspaceFolders(template)).toEqual([path.join(base, 'acme', 'alice'), path.join(base, 'acme', 'bob'), path.join(base, 'globex', 'carol')]);

    // A placeholder inside a level name, and a template without {user_id} (users go below it).
    await workspace(path.join(base, 'flat', 'ws-frank'), {});
    await workspace(path.join(base, 'flat', 'other'), {});
    expect(await listWorkspaceFolders(path.join(base, 'flat', 'ws-{user_id}'))).toEqual([path.join(base, 'flat', 'ws-frank')]);
    expect(await listWorkspaceFolders(path.join(base, 'flat'))).toEqual([path.join(base, 'flat', 'other'), path.join(base, 'flat', 'ws-frank')]);
    expect(await listWorkspaceFolders(path.join(base, 'missing', '{user_id}'))).toEqual([]);
  });

  it('selects the workspaces whose newest change is older than the limit', async () => {
    const stale = await workspace(path.join(base, 'acme', 'stale'), { 'files/old.txt': 'old', 'outputs/r.csv': '1,2' });
    await age(stale, NOW - 31 * DAY);
    const edge = await workspace(path.join(base, 'acme', 'edge'), { 'files/x.txt': 'x' });
    await age(edge, NOW - 30 * DAY);
    // One recent file deep inside keeps its whole workspace.
    const recentFile = await workspace(path.join(base, 'acme', 'recent-file'), { 'files/deep/new.txt': 'new', 'files/old.txt': 'old' });
    await age(recentFile, NOW - 90 * DAY);
    await utimes(path.join(recentFile, 'files/deep/new.txt'), new Date(NOW - DAY), new Date(NOW - DAY));
    // Only read lately: opening a workspace touches its folder.
    const recentlyUsed = await workspace(path.join(base, 'globex', 'used'), { 'files/old.txt': 'old' });
    await age(recentlyUsed, NOW - 90 * DAY);
    await utimes(recentlyUsed, new Date(NOW - 2 * DAY), new Date(NOW - 2 * DAY));

    const found = await findStaleWorkspaces(template, 30 * DAY, NOW);
    expect(found.map((f) => path.basename(f.path))).toEqual(['stale', 'edge']);
    expect(found[0]).toEqual({ path: stale, lastModified: new Date(NOW - 31 * DAY), bytes: 6 });
    expect((await findStaleWorkspaces(template, 30 * DAY, NOW + 29 * DAY)).map((f) => path.basename(f.path))).toEqual(['stale', 'edge', 'used', 'recent-file']);
    expect(await findStaleWorkspaces(template, 40 * DAY, NOW)).toEqual([]);
  });

  it('packs a workspace beside its folder, and restores it with its files and their dates', async () => {
    const dir = await workspace(path.join(base, 'acme', 'alice'), { 'files/notes.md': '# notes', 'outputs/report.csv': 'a,b\n1,2\n' });
    await age(dir, NOW - 40 * DAY);
    const [seen] = await findStaleWorkspaces(template, 30 * DAY, NOW);
    expect(await archiveWorkspace(seen!)).toBe(true);
    expect(existsSync(dir)).toBe(false);
    expect(await readdir(path.join(base, 'acme'))).toEqual(['alice.tar.gz']);

    expect(await restoreWorkspace(dir)).toBe(true);
    expect(await readFile(path.join(dir, 'files/notes.md'), 'utf8')).toBe('# notes');
    expect(await readFile(path.join(dir, 'outputs/report.csv'), 'utf8')).toBe('a,b\n1,2\n');
    expect((await stat(path.join(dir, 'files/notes.md'))).mtimeMs).toBe(NOW - 40 * DAY);
    expect(await readdir(path.join(base, 'acme'))).toEqual(['alice']);
    expect(await restoreWorkspace(dir)).toBe(false);
  });

  it('leaves a workspace that changed while it was packed, and no temporary file', async () => {
    const dir = await workspace(path.join(base, 'acme', 'alice'), { 'files/notes.md': 'v1' });
    await age(dir, NOW - 40 * DAY);
    const seen = await inspectWorkspace(dir);
    await writeFile(path.join(dir, 'files/notes.md'), 'v2');
    expect(await archiveWorkspace(seen!)).toBe(false);
    expect(await readFile(path.join(dir, 'files/notes.md'), 'utf8')).toBe('v2');
    expect(await readdir(path.join(base, 'acme'))).toEqual(['alice']);
  });

  it('opens an archived workspace from its archive, also in a Workspace that had it open before', async () => {
    const ws = new Workspace('alice', { rootTemplate: template, tenantId: 'acme' });
    await ws.writeFile('files/notes.md', 'kept');
    await age(ws.root, Date.now() - 40 * DAY);
    const [seen] = await findStaleWorkspaces(template, 30 * DAY);
    expect(await archiveWorkspace(seen!)).toBe(true);
    expect(existsSync(ws.root)).toBe(false);

    expect((await ws.readText('files/notes.md')).text).toBe('kept');
    expect(await readdir(path.join(base, 'acme'))).toEqual(['alice']);
    // Restored and used just now: not stale any more.
    expect(await findStaleWorkspaces(template, 30 * DAY)).toEqual([]);
    const again = new Workspace('alice', { rootTemplate: template, tenantId: 'acme' });
    expect((await again.readText('files/notes.md')).text).toBe('kept');
  });

  it('counts a workspace that is only read as used', async () => {
    const dir = await workspace(path.join(base, 'acme', 'alice'), { 'files/notes.md': 'old news' });
    await age(dir, Date.now() - 40 * DAY);
    const ws = new Workspace('alice', { rootTemplate: template, tenantId: 'acme' });
    expect((await ws.readText('files/notes.md')).text).toBe('old news');
    expect(await findStaleWorkspaces(template, 30 * DAY)).toEqual([]);
    await age(dir, Date.now() - 40 * DAY);
    await ws.relative(await ws.resolve('files'));
    expect(await findStaleWorkspaces(template, 30 * DAY)).toEqual([]);
  });

  it('refuses to open a workspace whose archive is unreadable, and keeps the archive', async () => {
    await mkdir(path.join(base, 'acme'));
    await writeFile(path.join(base, 'acme', 'alice.tar.gz'), 'not a tar.gz');
    const ws = new Workspace('alice', { rootTemplate: template, tenantId: 'acme' });
    await expect(ws.readText('files/notes.md')).rejects.toMatchObject({ code: 'workspace_restore_failed' });
    await expect(ws.ensure()).rejects.toBeInstanceOf(WorkspaceError);
    expect(await readdir(path.join(base, 'acme'))).toEqual(['alice.tar.gz']);
  });
});
