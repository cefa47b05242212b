/**
 * What the sandbox costs: the time to start a shell command (`/bin/sh -c true`, run to its end)
 * and a stdio MCP server (spawned to its first tools/list answer), in bubblewrap and as a plain
 * child of the worker, measured alternately in one process on this machine.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chooseSandbox } from '#core/sandbox/sandbox-setup.js';
import { installFolders, NoSandbox, type Sandbox, type SandboxedCommand } from '#core/sandbox/sandbox.js';
import { SandboxConfig } from '#core/config/sandbox-settings.js';
import { summarize } from './percentiles.js';
import { repoRoot } from './repo-paths.js';

export interface SandboxStartFigures {
  samples: number;
  /** Milliseconds, p50 and p99, per case. */
  shell: { sandboxed: [number, number]; plain: [number, number] };
  mcp: { sandboxed: [number, number]; plain: [number, number] };
}

const EVERYTHING = path.join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/** Starts `command` and resolves when `until` says its output is enough, or when it exits; returns ms. */
function timeStart(sandbox: Sandbox, command: SandboxedCommand, input?: string, until?: (out: string) => boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = sandbox.spawn(command, ['pipe', 'pipe', 'ignore']);
    let out = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      resolve(performance.now() - started);
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    };
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (until?.(out)) finish();
    });
    child.on('error', reject);
    child.on('exit', (code) => (until && !done ? reject(new Error(`exited ${code} before answering: ${out.slice(0, 200)}`)) : finish()));
    if (input) child.stdin!.write(input);
    else child.stdin!.end();
  });
}

/** @throws Error when bubblewrap does not work here (the figures would mean nothing). */
export async function runSandboxBench(samples = Number(process.env.BENCH_SANDBOX_SAMPLES ?? 30)): Promise<SandboxStartFigures> {
  const { sandbox, reason } = await chooseSandbox(new SandboxConfig());
  if (sandbox.kind !== 'bwrap') throw new Error(`no sandbox here: ${reason}`);
  const plain = new NoSandbox();
  const workspace = mkdtempSync(path.join(tmpdir(), 'dataagent-sandbox-bench-'));
  try {
    const shell: SandboxedCommand = { command: '/bin/sh', args: ['-c', 'true'], env: { PATH: '/usr/bin:/bin' }, workspace };
    const mcp: SandboxedCommand = { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { PATH: '/usr/bin:/bin' }, workspace, readOnly: installFolders(process.execPath, [EVERYTHING], existsSync) };
    const init = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } })}\n`;
    const answered = (out: string) => out.includes('"id":1');
    const times = { shellBox: [] as number[], shellPlain: [] as number[], mcpBox: [] as number[], mcpPlain: [] as number[] };
    for (let i = 0; i < samples; i++) {
      times.shellBox.push(await timeStart(sandbox, shell));
      times.shellPlain.push(await timeStart(plain, shell));
    }
    for (let i = 0; i < Math.max(5, Math.round(samples / 3)); i++) {
      times.mcpBox.push(await timeStart(sandbox, mcp, init, answered));
      times.mcpPlain.push(await timeStart(plain, mcp, init, answered));
    }
    const p = (xs: number[]): [number, number] => {
      const { p50, p99 } = summarize(xs);
      return [p50, p99];
    };
    return { samples, shell: { sandboxed: p(times.shellBox), plain: p(times.shellPlain) }, mcp: { sandboxed: p(times.mcpBox), plain: p(times.mcpPlain) } };
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

export function formatSandboxBench(f: SandboxStartFigures): string {
  const ms = ([p50, p99]: [number, number]) => `p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`;
  return [
    'Sandbox start (bubblewrap vs a plain child, same machine, alternating):',
    `  shell command (/bin/sh -c true, to its end)      sandboxed ${ms(f.shell.sandboxed)} | plain ${ms(f.shell.plain)}`,
    `  stdio MCP server (server-everything, to initialize) sandboxed ${ms(f.mcp.sandboxed)} | plain ${ms(f.mcp.plain)}`,
  ].join('\n');
}
