import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Caller } from '../../auth/caller.js';
import { WorkspaceRegistry } from '../../workspace/workspace-registry.js';
import type { ToolContext } from '../tool.js';
import { createShellTool } from './shell.tool.js';

const caller: Caller = { tenantId: 't', userId: 'u1', role: 'user' };

/** Running, not merely a zombie waiting for whichever init adopted it to reap it. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    return true;
  }
}

describe('shell tool', () => {
  let base: string;
  let registry: WorkspaceRegistry;
  const ctx = (signal = new AbortController().signal): ToolContext => ({ caller, sessionId: 's', runId: 'r', toolCallId: 'c', signal, emit: () => undefined });

  beforeEach(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'shell-tool-'));
    registry = new WorkspaceRegistry({ rootTemplate: path.join(base, '{user_id}') });
  });

  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('is always sensitive and runs in the workspace root', async () => {
    const shell = createShellTool((c) => registry.forCaller(c));
    expect(shell.sensitive).toBe(true);
    const result = await shell.execute({ command: 'pwd; ls; echo hi >&2; echo made > outputs/x.txt' }, ctx());
    const root = await registry.forCaller(caller).ensure();
    expect(result).toMatchObject({ success: true, output: { exit_code: 0, stdout: `${root}\nfiles\noutputs\nuploads\n`, stderr: 'hi\n' } });
    expect(await readFile(path.join(root, 'outputs/x.txt'), 'utf8')).toBe('made\n');
  });

  it('reports a failing exit code', async () => {
    const result = await createShellTool((c) => registry.forCaller(c)).execute({ command: 'exit 3' }, ctx());
    expect(result).toMatchObject({ success: false, output: { exit_code: 3 }, error: expect.stringContaining('3') });
  });

  it('does not pass the worker environment on', async () => {
    process.env.SHELL_SPEC_SECRET = 'sk-should-not-leak';
    try {
      const result = await createShellTool((c) => registry.forCaller(c), { env: { EXTRA: 'given' } }).execute({ command: 'env' }, ctx());
      const out = (result.output as { stdout: string }).stdout;
      expect(out).not.toContain('sk-should-not-leak');
      expect(out).toContain('EXTRA=given');
      expect(out).toContain('PATH=/usr/local/bin:/usr/bin:/bin');
    } finally {
      delete process.env.SHELL_SPEC_SECRET;
    }
  });

  it('caps output', async () => {
    const result = await createShellTool((c) => registry.forCaller(c), { maxOutputBytes: 100 }).execute({ command: 'yes | head -c 10000' }, ctx());
    const out = (result.output as { stdout: string }).stdout;
    expect(out.startsWith('y\n'.repeat(50))).toBe(true);
    expect(out).toContain('9900 more bytes dropped');
  });

  it('kills the whole process group on timeout', async () => {
    const shell = createShellTool((c) => registry.forCaller(c), { timeoutMs: 300, killGraceMs: 200 });
    const result = await shell.execute({ command: 'sleep 30 >/dev/null 2>&1 & echo $!; wait' }, ctx());
    expect(result).toMatchObject({ success: false, output: { timed_out: true }, error: expect.stringContaining('timed out') });
    const grandchild = Number((result.output as { stdout: string }).stdout.trim());
    expect(grandchild).toBeGreaterThan(0);
    // SIGTERM/SIGKILL go to the group; give the kernel a moment to reap.
    for (let i = 0; i < 50 && alive(grandchild); i++) await new Promise((r) => setTimeout(r, 20));
    expect(alive(grandchild)).toBe(false);
  }, 10_000);

  it('leaves no background process behind after a normal exit', async () => {
    const result = await createShellTool((c) => registry.forCaller(c)).execute({ command: 'sleep 30 >/dev/null 2>&1 & echo $!' }, ctx());
    const pid = Number((result.output as { stdout: string }).stdout.trim());
    for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
    expect(alive(pid)).toBe(false);
  });

  it('stops when the run is cancelled', async () => {
    const controller = new AbortController();
    const running = createShellTool((c) => registry.forCaller(c)).execute({ command: 'sleep 30' }, ctx(controller.signal));
    setTimeout(() => controller.abort(), 50);
    await expect(running).resolves.toMatchObject({ success: false, error: 'Command cancelled' });
  });
});
