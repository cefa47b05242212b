import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export interface StdioGroupOptions {
  command: string;
  args?: string[];
  /** The child's whole environment (`stdioEnvironment`): it inherits nothing from this process. */
  env?: Record<string, string>;
  cwd?: string;
  /** How long the group gets after SIGTERM before SIGKILL. Default 2 s. */
  killGraceMs?: number;
}

/** Lines of a server's stderr kept for error messages. */
const STDERR_LINES = 20;

/**
 * MCP over a child's stdin and stdout, with the child leading its own process group: closing
 * signals the whole group (SIGTERM, then SIGKILL after a grace), so the grandchildren an
 * `npx`-style wrapper leaves behind die with it. The SDK's stdio transport signals the child alone.
 */
export class StdioGroupTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child?: ChildProcessByStdio<Writable, Readable, Readable>;
  private readonly buffer = new ReadBuffer();
  private readonly stderrTail: string[] = [];
  private exited?: Promise<void>;
  private closed = false;

  constructor(private readonly options: StdioGroupOptions) {}

  /** The child's pid, which is also its process group id. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last lines the server wrote to stderr (for an error that says why it failed). */
  get stderr(): string {
    return this.stderrTail.join('\n');
  }

  async start(): Promise<void> {
    const { command, args = [], env = {}, cwd } = this.options;
    await new Promise<void>((resolve, reject) => {
      const child = spawn(command, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true, windowsHide: true });
      this.child = child;
      this.exited = new Promise((done) => child.once('exit', () => done()));
      child.once('error', (err) => {
        reject(err);
        this.onerror?.(err);
      });
      child.once('spawn', () => resolve());
      child.once('exit', () => {
        // The leader is gone; anything it left in its group goes too.
        this.signalGroup('SIGKILL');
        this.closed = true;
        this.onclose?.();
      });
      child.stdout.on('data', (chunk: Buffer) => {
        this.buffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (err) {
            this.onerror?.(err as Error);
            continue;
          }
          if (!message) break;
          this.onmessage?.(message);
        }
      });
      child.stderr.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString('utf8').split('\n')) {
          if (!line.trim()) continue;
          this.stderrTail.push(line.slice(0, 500));
          if (this.stderrTail.length > STDERR_LINES) this.stderrTail.shift();
        }
      });
      for (const stream of [child.stdin, child.stdout, child.stderr]) stream.on('error', (err) => this.onerror?.(err));
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed) throw new Error('MCP server process is not running');
    await new Promise<void>((resolve, reject) => {
      if (stdin.write(serializeMessage(message), (err) => (err ? reject(err) : undefined))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Ends the server: stdin closed, SIGTERM to its group, SIGKILL to the group after the grace. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.buffer.clear();
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin.end();
      this.signalGroup('SIGTERM');
      const grace = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), this.options.killGraceMs ?? 2_000).unref());
      if ((await Promise.race([this.exited, grace])) === 'timeout') this.signalGroup('SIGKILL');
      await this.exited;
    }
    this.signalGroup('SIGKILL');
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (!pid) return;
    try {
      process.kill(-pid, signal);
    } catch {
      /* the group is gone */
    }
  }
}
