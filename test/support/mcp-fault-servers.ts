import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The fault server (plain JavaScript, so the same file runs from source and from dist/ tests). */
export const FAULT_SERVER = fileURLToPath(new URL('./mcp-fault-server.mjs', import.meta.url)).replace('/dist/test/support/', '/test/support/');

/** One line the fault server appended to its --record file (see mcp-fault-server.mjs). */
export interface FaultEntry {
  event: 'start' | 'connect' | 'http' | 'call' | 'cancelled';
  at: number;
  pid?: number;
  ppid?: number;
  pgid?: number;
  mode?: string;
  /** start: the names of the process's environment variables. */
  env?: string[];
  method?: string;
  rpc?: string;
  tool?: string;
  request_id?: number | string;
  reason?: string;
  /** The Mcp-Session-Id header of an HTTP request (null before the handshake gives one). */
  session?: string | null;
}

/** What fault servers wrote to one record file, read afresh on each look. */
export class FaultRecord {
  constructor(readonly file: string) {}

  entries(): FaultEntry[] {
    if (!existsSync(this.file)) return [];
    return readFileSync(this.file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as FaultEntry);
  }

  count(match: (e: FaultEntry) => boolean): number {
    return this.entries().filter(match).length;
  }

  /** The last entry that matches; waits for it, looking every 20 ms, up to `timeoutMs`. */
  async waitFor(match: (e: FaultEntry) => boolean, timeoutMs = 10_000): Promise<FaultEntry> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.entries().filter(match).at(-1);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`${this.file}: no matching entry in ${timeoutMs} ms; have ${JSON.stringify(this.entries().slice(-5))}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

export interface FaultHttpServer {
  proc: ChildProcess;
  url: string;
  record: FaultRecord;
  stop(): Promise<void>;
}

/** Starts the fault server in an HTTP mode on 127.0.0.1:`port`; resolves once it listens. */
export async function startFaultHttp(mode: 'http' | 'http-401' | 'http-huge', port: number, recordFile: string): Promise<FaultHttpServer> {
  const proc = spawn(process.execPath, [FAULT_SERVER, mode, '--port', String(port), '--record', recordFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  proc.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = once(proc, 'exit');
  const listening = new Promise<void>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once('line', () => resolve());
    void exited.then(([code]) => reject(new Error(`fault server ${mode} on ${port} exited with ${code}: ${stderr.join('')}`)));
  });
  await listening;
  return {
    proc,
    url: `http://127.0.0.1:${port}/mcp`,
    record: new FaultRecord(recordFile),
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * SIGKILLs every fault server recorded in `dir`'s record files that still runs, so a failed
 * leak test does not leave its leak behind for the next. Returns their pids.
 */
export function killRecordedServers(dir: string): number[] {
  const killed: number[] = [];
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    if (!name.endsWith('.jsonl')) continue;
    for (const entry of new FaultRecord(join(dir, name)).entries()) {
      if (entry.event !== 'start' || !entry.pid) continue;
      let cmdline = '';
      try {
        cmdline = readFileSync(`/proc/${entry.pid}/cmdline`, 'utf8');
      } catch {
        continue; // gone
      }
      if (!cmdline.includes('mcp-fault-server')) continue; // the pid was reused
      process.kill(entry.pid, 'SIGKILL');
      killed.push(entry.pid);
    }
  }
  return killed;
}
