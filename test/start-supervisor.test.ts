import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, dropTestDatabase, mysqlEnv, type TestDatabase } from './support/databases.js';

const root = fileURLToPath(new URL('../', import.meta.url));

/** Pids of the children of `pid` (empty when it has none or is gone). */
function childrenOf(pid: number): { pid: number; args: string }[] {
  try {
    return execFileSync('ps', ['--ppid', String(pid), '-o', 'pid=,args='], { encoding: 'utf8' })
      .split('\n')
      .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ pid: Number(m[1]), args: m[2]! }));
  } catch {
    return []; // ps exits 1 when nothing matches
  }
}

/** Whether a process is still there (a zombie counts as gone: it runs nothing). */
function alive(pid: number): boolean {
  try {
    const stat = execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    return stat !== '' && !stat.startsWith('Z');
  } catch {
    return false;
  }
}

describe('npm start supervisor (scripts/start.mjs)', () => {
  let db: TestDatabase;
  let dataDir: string;
  /** Every pid of every tree started here, for the clean-up of a failed run. */
  const started: number[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('start');
    dataDir = mkdtempSync(join(tmpdir(), 'da-start-'));
  });

  afterAll(async () => {
    // Only what this file started, by pid: a frozen worker must not outlive a failed run of it.
    for (const pid of started) {
      for (const signal of ['SIGCONT', 'SIGKILL'] as const) {
        try {
          process.kill(pid, signal);
        } catch {
          // gone
        }
      }
    }
    if (db) await dropTestDatabase(db.database).catch(() => undefined);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /**
   * Runs `command` (which runs scripts/start.mjs) against the harness's Redis and this file's
   * database, waits until it is ready, and freezes the worker (SIGSTOP: its SIGTERM handler
   * never runs, as with a busy event loop).
   * @param env variables over the test's own
   * @returns the started process, every pid of the tree (start.mjs, supervisor, gateway,
   * worker), the gateway's and the worker's pids, its output and its exit.
   */
  async function startFrozen(command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
    const proc = spawn(command, args, {
      cwd: root,
      env: {
        ...process.env,
        DATAAGENT_SKIP_BUILD: 'true',
        DATAAGENT_STOP_GRACE_MS: '1000',
        DATAAGENT_HOST: '127.0.0.1',
        DATAAGENT_PORT: '0',
        ...mysqlEnv(db),
        DATAAGENT_QUEUE_NAME: `runs-${randomUUID().slice(0, 8)}`,
        DATAAGENT_LLM_PROVIDER: 'offline',
        DATAAGENT_STORAGE_ROOT: dataDir,
        DATAAGENT_WORKSPACE_ROOT: join(dataDir, 'workspaces', '{user_id}'),
        // Given, so the test leaves the repository's .data alone (start.mjs would make .data/secret.key).
        DATAAGENT_SECRET_KEY: 'ab'.repeat(32),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(proc.pid!);
    const output: string[] = [];
    const exited = once(proc, 'exit');
    await new Promise<void>((resolve, reject) => {
      for (const stream of [proc.stdout!, proc.stderr!]) {
        createInterface({ input: stream }).on('line', (line) => {
          output.push(line);
          if (line.includes('] ready at http://')) resolve();
        });
      }
      void exited.then(([code]) => reject(new Error(`npm start exited (${code}) before it was ready:\n${output.join('\n')}`)));
    });

    // command → [sh →] start.mjs → supervisor → gateway and worker
    const tree = [proc.pid!];
    for (let parent = proc.pid!, children = childrenOf(parent); children.length > 0; children = childrenOf(parent)) {
      tree.push(...children.map((c) => c.pid));
      started.push(...children.map((c) => c.pid));
      if (children.length > 1) break;
      parent = children[0]!.pid;
    }
    const apps = childrenOf(tree.at(-3)!);
    const worker = apps.find((a) => a.args.includes('dist/worker.js'));
    const gateway = apps.find((a) => a.args.includes('dist/gateway.js'));
    expect(gateway).toBeDefined();
    expect(worker).toBeDefined();
    process.kill(worker!.pid, 'SIGSTOP');
    return { proc, tree, output, exited, pids: { gateway: gateway!.pid, worker: worker!.pid } };
  }

  it('kills a frozen worker after the grace it announces, and leaves no process behind', async () => {
    const { proc, tree, output, exited } = await startFrozen(process.execPath, [join(root, 'scripts/start.mjs')]);
    process.kill(proc.pid!, 'SIGTERM');
    await exited;

    // The quick start points a newcomer at the web UI.
    expect(output.join('\n')).toMatch(/Open http:\/\/127\.0\.0\.1:\d+\/ in your browser/);
    expect(output.join('\n')).toContain('stopping gateway and worker (killing after 1 s)...');
    expect(output.join('\n')).toContain('worker did not stop within 1 s; killed it');
    expect(tree.filter(alive)).toEqual([]);
  }, 120_000);

  it('hands each app only the secrets it reads: API keys to the gateway, model and search keys to the worker', async () => {
    const apiKey = `start-test-${randomUUID()}`;
    const { proc, output, exited, pids } = await startFrozen(process.execPath, [join(root, 'scripts/start.mjs'), '--tavily-api-key', 'tvly-given-as-a-flag'], {
      DATAAGENT_API_KEYS: `${apiKey}:acme:alice`,
      OPENAI_API_KEY: 'sk-given-in-the-environment',
    });
    const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const [gatewayEnv, workerEnv] = [environ(pids.gateway), environ(pids.worker)];
    const [gatewayArgs, workerArgs] = [cmdline(pids.gateway), cmdline(pids.worker)];

    expect(gatewayEnv).toContain(`DATAAGENT_API_KEYS=${apiKey}:acme:alice`);
    expect([...workerEnv, ...workerArgs].filter((s) => s.includes(apiKey))).toEqual([]);
    expect(workerEnv).toContain('OPENAI_API_KEY=sk-given-in-the-environment');
    expect(workerArgs).toEqual(expect.arrayContaining(['--tavily-api-key', 'tvly-given-as-a-flag']));
    expect([...gatewayEnv, ...gatewayArgs].filter((s) => /sk-given|tvly-given|tavily/.test(s))).toEqual([]);
    // What both use, both still have.
    for (const env of [gatewayEnv, workerEnv]) expect(env).toContain(`DATAAGENT_SECRET_KEY=${'ab'.repeat(32)}`);

    // And the gateway, which holds the key, asks for it.
    const url = /\] ready at (http:\/\/127\.0\.0\.1:\d+):/.exec(output.join('\n'))![1]!;
    expect((await fetch(`${url}/api/v1/sessions`)).status).toBe(401);
    expect((await fetch(`${url}/api/v1/sessions`, { headers: { 'x-api-key': apiKey } })).status).toBe(200);

    process.kill(proc.pid!, 'SIGTERM');
    await exited;
  }, 120_000);

  it('stops everything when SIGTERM reaches only the shell npm runs it in, which dies without passing it on', async () => {
    // `cmd; exit $?` keeps sh from exec'ing node, as npm's `sh -c` does with dash.
    const { proc, tree, output } = await startFrozen('sh', ['-c', `"${process.execPath}" scripts/start.mjs; exit $?`]);
    expect(tree).toHaveLength(5); // sh, start.mjs, supervisor, gateway, worker
    // start.mjs and its supervisor hold our stdout: it ends when both have exited.
    const outputEnded = once(proc.stdout!, 'end');
    process.kill(proc.pid!, 'SIGTERM');
    await outputEnded;

    expect(output.join('\n')).toContain('worker did not stop within 1 s; killed it');
    expect(tree.filter(alive)).toEqual([]);
  }, 120_000);
});
