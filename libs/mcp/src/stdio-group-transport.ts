import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { BoundedLineReader } from './bounded-line-reader.js';
import { DEFAULT_MAX_MESSAGE_BYTES, McpMessageTooLargeError } from './message-limits.js';
import type { SandboxedCommand } from '#core/sandbox/sandbox.js';

export interface StdioGroupOptions {
  command: string;
  args?: string[];
  /** The child's whole environment (`stdioEnvironment`): it inherits nothing from this process. */
  env?: Record<string, string>;
  cwd?: string;
  /** How long the group gets after SIGTERM before SIGKILL. Default 2 s. */
  killGraceMs?: number;
  /** The server's name, for the error an oversized message gives. */
  name?: string;
  /** Most bytes of one message (one line of stdout). Default {@link DEFAULT_MAX_MESSAGE_BYTES}. */
  maxMessageBytes?: number;
  /**
   * A line passed `maxMessageBytes` and is being dropped unread; `head` is its first bytes. The
   * transport does not track requests, so whoever does fails the one it answered. Absent: `onerror`.
   */
  onOversized?: (error: McpMessageTooLargeError, head: string) => void;
  /** Starts the server in a sandbox (its own process group, stdio piped); absent: spawned as it is. */
  launch?: (command: Pick<SandboxedCommand, 'command' | 'args' | 'env' | 'cwd'>) => Promise<ChildProcess>;
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
  private readonly reader: BoundedLineReader;
  private readonly stderrTail: string[] = [];
  private exited?: Promise<void>;
  private closed = false;
  /** close() was called: a start still preparing its sandbox must not leave a server behind. */
  private closing = false;

  constructor(private readonly options: StdioGroupOptions) {
    const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.reader = new BoundedLineReader({
      maxBytes,
      onLine: (line) => this.receive(line),
      onOversize: (head) => {
        const error = new McpMessageTooLargeError(options.name ?? options.command, maxBytes);
        if (options.onOversized) options.onOversized(error, head);
        else this.onerror?.(error);
      },
    });
  }

  /** The child's pid, which is also its process group id. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last lines the server wrote to stderr (for an error that says why it failed). */
  get stderr(): string {
    return this.stderrTail.join('\n');
  }

  async start(): Promise<void> {
    const { command, args = [], env = {}, cwd, launch } = this.options;
    const launched = launch ? await launch({ command, args, env, ...(cwd ? { cwd } : {}) }) : undefined;
    if (this.closing) {
      // Closed while the sandbox was being prepared: nobody would ever close what it started.
      if (launched?.pid) killGroup(launched.pid, 'SIGKILL');
      throw new Error(`MCP server ${this.options.name ?? command} was closed while it was starting`);
    }
    await new Promise<void>((resolve, reject) => {
      const child = (launched ?? spawn(command, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true, windowsHide: true })) as ChildProcessByStdio<Writable, Readable, Readable>;
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
      child.stdout.on('data', (chunk: Buffer) => this.reader.push(chunk));
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
    this.closing = true;
    const child = this.child;
    if (!child) return;
    this.reader.clear();
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin.end();
      this.signalGroup('SIGTERM');
      const grace = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), this.options.killGraceMs ?? 2_000).unref());
      if ((await Promise.race([this.exited, grace])) === 'timeout') this.signalGroup('SIGKILL');
      await this.exited;
    }
    this.signalGroup('SIGKILL');
  }

  /** One line of stdout, within the cap: a JSON-RPC message, or an error to report. */
  private receive(line: string): void {
    if (!line.trim()) return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (err) {
      this.onerror?.(err as Error);
      return;
    }
    this.onmessage?.(message);
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid) killGroup(pid, signal);
  }
}

/** Signals a process group (a detached child's pid is its group id); a group that is gone is no error. */
function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* the group is gone */
  }
}
