import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { io, type Socket } from 'socket.io-client';
import { epochNow, readStamp } from './clock.js';
import { processCpuSeconds } from './process-cpu.js';
import { repoRoot } from './repo-paths.js';

export interface SocketIoFloorOptions {
  clients: number;
  /** Events each client receives and records. */
  eventsPerClient: number;
  /** Events each client receives first and does not record. */
  warmupPerClient: number;
  intervalMs: number;
}

export interface SocketIoFloorResult {
  /** One latency in ms per recorded event. */
  latencyMs: number[];
  /** Events the server emitted (warm-up included). */
  emitted: number;
  /** The server process's CPU seconds from the first `start` to the last event received (warm-up included). */
  serverCpuSeconds: number;
}

/**
 * The bare Socket.IO hop: a plain Socket.IO server in a child process emits stamped,
 * text-event-shaped events to `clients` websocket clients in this process, each at one event
 * per `intervalMs`, with the clients' starts spread over one interval. A client reads
 * `performance.timeOrigin + performance.now()` in its `event` handler minus the stamp: the same
 * clock and the same subtraction as the system's per-event figure. The server's own CPU time over
 * the emits gives what a bare Socket.IO server spends per emitted event on this machine.
 */
export async function measureSocketIoFloor(options: SocketIoFloorOptions): Promise<SocketIoFloorResult> {
  const server = spawn(process.execPath, [`${repoRoot}dist/bench/socketio-floor-server.js`], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const exited = once(server, 'exit');
  const sockets: Socket[] = [];
  try {
    const port = await new Promise<number>((resolve, reject) => {
      createInterface({ input: server.stdout! }).once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
      server.once('exit', (code) => reject(new Error(`socket.io floor server exited with ${code}`)));
    });
    for (let i = 0; i < options.clients; i++) {
      const socket = io(`http://127.0.0.1:${port}`, { transports: ['websocket'], reconnection: false, forceNew: true });
      sockets.push(socket);
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('connect_error', reject);
      });
    }
    const samples: number[] = [];
    const perClient = options.warmupPerClient + options.eventsPerClient;
    let remaining = options.clients * perClient;
    const allReceived = new Promise<void>((resolve) => {
      for (const socket of sockets) {
        socket.on('event', (event: { seq: number; content: string }) => {
          const now = epochNow();
          const stamp = readStamp(event.content);
          if (stamp !== undefined && event.seq > options.warmupPerClient) samples.push(now - stamp);
          if (--remaining === 0) resolve();
        });
      }
    });
    const cpuBefore = processCpuSeconds(server.pid!);
    for (const socket of sockets) {
      socket.emit('start', { count: perClient, intervalMs: options.intervalMs });
      await sleep(options.intervalMs / options.clients);
    }
    await allReceived;
    return { latencyMs: samples, emitted: options.clients * perClient, serverCpuSeconds: processCpuSeconds(server.pid!) - cpuBefore };
  } finally {
    for (const socket of sockets) socket.disconnect();
    if (server.exitCode === null && server.signalCode === null) {
      server.kill('SIGTERM');
      const timer = setTimeout(() => server.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
  }
}
