import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { FaultRecord } from './mcp-fault-servers.js';

/** The elicitation test server (plain JavaScript, so the same file runs from source and from dist/ tests). */
export const ELICIT_SERVER = fileURLToPath(new URL('./mcp-elicit-server.mjs', import.meta.url)).replace('/dist/test/support/', '/test/support/');

/** What the elicitation server received for one elicitation (see mcp-elicit-server.mjs). */
export interface ElicitEntry {
  event: 'elicitation' | 'elicitation_failed';
  tool: string;
  mode?: 'form' | 'url';
  action?: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown> | null;
  restaurant?: string;
  error?: string;
}

export interface ElicitHttpServer {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/** Starts the elicitation server over streamable HTTP on a free loopback port; resolves once it listens. */
export async function startElicitHttp(recordFile: string): Promise<ElicitHttpServer> {
  const proc = spawn(process.execPath, [ELICIT_SERVER, 'http', '--port', '0', '--record', recordFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  proc.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = once(proc, 'exit');
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once('line', (line) => resolve((JSON.parse(line) as { listening: number }).listening));
    void exited.then(([code]) => reject(new Error(`elicitation server exited with ${code}: ${stderr.join('')}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    proc,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** The elicitation server's record file, read afresh on each look. */
export function elicitRecord(file: string): FaultRecord & { elicitations(): ElicitEntry[] } {
  const record = new FaultRecord(file);
  return Object.assign(record, { elicitations: () => record.entries() as unknown as ElicitEntry[] });
}
