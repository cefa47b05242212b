import { spawn, type ChildProcess } from 'node:child_process';
import { StdioGroupTransport } from './stdio-group-transport.js';

/** Whether a process still runs (signal 0 asks without sending anything). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('StdioGroupTransport', () => {
  it('a close while the sandbox is being prepared leaves no server behind, and the start fails saying so', async () => {
    let child: ChildProcess | undefined;
    let release!: () => void;
    const prepared = new Promise<void>((resolve) => (release = resolve));
    const transport = new StdioGroupTransport({
      command: 'sleep',
      args: ['30'],
      name: 'slow-sandbox',
      // A launcher that takes its time (a sandbox being set up), then starts the server.
      launch: async ({ command, args }) => {
        await prepared;
        child = spawn(command, [...args], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
        await new Promise((resolve) => child!.once('spawn', resolve));
        return child;
      },
    });
    const starting = transport.start();
    await transport.close();
    release();
    await expect(starting).rejects.toThrow('MCP server slow-sandbox was closed while it was starting');
    const exited = child!.exitCode !== null || child!.signalCode !== null ? true : await new Promise<boolean>((resolve) => child!.once('exit', () => resolve(true)));
    expect(exited).toBe(true);
    expect(alive(child!.pid!)).toBe(false);
  });
});
