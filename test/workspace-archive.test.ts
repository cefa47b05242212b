import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { AppProcess } from './support/app-processes.js';
import { api } from './support/chat-clients.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

const DAY = 86_400_000;
const root = fileURLToPath(new URL('../', import.meta.url)).replace(/dist\/$/, '');

/** Writes a workspace folder as a worker lays it out (files/, uploads/, outputs/) with these files. */
async function workspace(dir: string, files: Record<string, string>): Promise<void> {
  for (const sub of ['files', 'uploads', 'outputs']) await mkdir(join(dir, sub), { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
}

/** A workspace dated `at`, deepest first: it turns stale in one step. */
async function staleWorkspace(dir: string, files: Record<string, string>, at: number): Promise<void> {
  await workspace(dir, files);
  await age(dir, at);
}

async function age(dir: string, at: number): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await age(join(dir, entry.name), at);
    else await utimes(join(dir, entry.name), new Date(at), new Date(at));
  }
  await utimes(dir, new Date(at), new Date(at));
}

/** Every path under `dir` with its mtime and size: what "nothing changed" compares. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = join(entry.parentPath, entry.name);
    const stat = await lstat(full);
    out[full] = `${stat.mtimeMs} ${stat.size}`;
  }
  return out;
}

/** The JSON log lines with message `msg` that the workers wrote. */
function logged(workers: AppProcess[], msg: string): Array<Record<string, unknown>> {
  return workers.flatMap((w) => w.output.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>)).filter((line) => line.msg === msg);
}

/** Resolves once `done()` holds, checked each time a worker writes a line. */
function untilLogged(workers: AppProcess[], done: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  if (done()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const check = () =>
      setImmediate(() => {
        if (!done()) return;
        stop();
        resolve();
      });
    const stop = () => {
      clearTimeout(timer);
      for (const w of workers) w.proc.stdout!.off('data', check);
    };
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`not logged within ${timeoutMs} ms: ${what}\n${workers.flatMap((w) => w.output).join('\n')}`));
    }, timeoutMs);
    for (const w of workers) w.proc.stdout!.on('data', check);
  });
}

describe('workspaces untouched for DATAAGENT_WORKSPACE_ARCHIVE_DAYS', () => {
  let system: TestSystem;
  let workspaces: string;
  const staleAt = Math.floor((Date.now() - 40 * DAY) / 1000) * 1000;
  const aliceFiles = { 'files/notes.md': 'remember the milk\n', 'outputs/report.csv': 'a,b\n1,2\n' };

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 0, env: { DATAAGENT_WORKSPACE_ARCHIVE_INTERVAL_SECONDS: '0.3' } });
    workspaces = join(system.dataDir, 'workspaces');
    await staleWorkspace(join(workspaces, 'acme', 'alice'), aliceFiles, staleAt);
    await staleWorkspace(join(workspaces, 'globex', 'dave'), { 'files/old.txt': 'x'.repeat(3000) }, staleAt);
    await workspace(join(workspaces, 'acme', 'bob'), { 'files/fresh.txt': 'new' });
  });
  afterAll(() => system?.stop());

  it('are listed by the dry run with their date and size, and nothing changes', async () => {
    const before = await snapshot(workspaces);
    const { stdout } = await promisify(execFile)(process.execPath, [join(root, 'dist/apps/worker/src/archive-workspaces.js'), '--dry-run'], { env: { ...process.env, ...system.env } });
    const lines = stdout.trim().split('\n');
    const date = new Date(staleAt).toISOString();
    expect(lines).toEqual([
      `${join(workspaces, 'acme', 'alice')}  last modified ${date}  26 bytes`,
      `${join(workspaces, 'globex', 'dave')}  last modified ${date}  2.9 KB`,
      expect.stringMatching(/^2 workspace\(s\) untouched for 30 days would be archived \(3\.0 KB\); dry run, nothing changed\.$/),
    ]);
    expect(await snapshot(workspaces)).toEqual(before);
  });

  it('are archived once each while two workers sweep, and the fresh one is left alone', async () => {
    const bobBefore = await snapshot(join(workspaces, 'acme', 'bob'));
    const workers = await Promise.all([system.addWorker({ DATAAGENT_WORKER_ID: 'archiver-1' }), system.addWorker({ DATAAGENT_WORKER_ID: 'archiver-2' })]);
    const archived = () => logged(workers, 'archived a workspace').map((line) => line.workspace as string);
    const first = [join(workspaces, 'acme', 'alice'), join(workspaces, 'globex', 'dave')];
    await untilLogged(workers, () => first.every((p) => archived().includes(p)), 'the first two archived');

    // More go stale while both workers are up.
    const later = ['s1', 's2', 's3', 's4'].map((name, i) => join(workspaces, i % 2 ? 'globex' : 'acme', name));
    for (const dir of later) await staleWorkspace(dir, { 'files/a.txt': dir }, staleAt);
    await untilLogged(workers, () => later.every((p) => archived().includes(p)), 'the later four archived');
    const sweeps = logged(workers, 'workspace archive sweep').length;
    await untilLogged(workers, () => logged(workers, 'workspace archive sweep').length >= sweeps + 3, 'three more sweeps');

    expect(archived().sort()).toEqual([...first, ...later].sort());
    expect(logged(workers, 'archiving a workspace failed')).toEqual([]);
    for (const dir of [...first, ...later]) {
      expect(existsSync(dir)).toBe(false);
      expect((await lstat(`${dir}.tar.gz`)).size).toBeGreaterThan(0);
    }
    // No temporary archive is left behind.
    expect((await readdir(join(workspaces, 'acme'))).sort()).toEqual(['alice.tar.gz', 'bob', 's1.tar.gz', 's3.tar.gz']);
    expect(await snapshot(join(workspaces, 'acme', 'bob'))).toEqual(bobBefore);
  });

  it('is restored, files intact, when its user comes back, and is not archived again', async () => {
    const alice = join(workspaces, 'acme', 'alice');
    const res = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { message: '[[tool:read_file {"path":"files/notes.md"}]]' } });
    expect(res.status).toBe(200);
    const result = (res.body.events as Array<{ event_type: string; status?: string; result?: unknown }>).find((e) => e.event_type === 'tool_result');
    expect(result).toMatchObject({ status: 'success' });
    expect(String(result!.result)).toContain('remember the milk');
    expect(existsSync(`${alice}.tar.gz`)).toBe(false);
    for (const [name, text] of Object.entries(aliceFiles)) expect(await readFile(join(alice, name), 'utf8')).toBe(text);
    expect((await lstat(join(alice, 'files/notes.md'))).mtimeMs).toBe(staleAt);

    const sweeps = logged(system.workers, 'workspace archive sweep').length;
    await untilLogged(system.workers, () => logged(system.workers, 'workspace archive sweep').length >= sweeps + 3, 'three more sweeps');
    expect(existsSync(alice)).toBe(true);
    expect(logged(system.workers, 'archived a workspace').filter((line) => line.workspace === alice)).toHaveLength(1);
  });
});
