/**
 * A plain Socket.IO server (no NestJS, no Redis) for the Socket.IO floor, run as a process of
 * its own like the gateway. A client emits `start` {count, intervalMs}; the server then emits
 * `count` text-event-shaped `event`s to it, one every `intervalMs`, each stamped with
 * `performance.timeOrigin + performance.now()` just before the emit.
 *
 * `node dist/bench/socketio-floor-server.js` prints `{"port":N}` and serves on 127.0.0.1 until
 * SIGTERM or its parent's IPC channel closes.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Server } from 'socket.io';
import { epochNow } from './clock.js';

interface StartRequest {
  count: number;
  intervalMs: number;
}

async function main(): Promise<void> {
  const http = createServer();
  const io = new Server(http, { transports: ['websocket'] });
  io.on('connection', (socket) => {
    socket.on('start', ({ count, intervalMs }: StartRequest) => {
      let seq = 0;
      const timer = setInterval(() => {
        seq++;
        socket.emit('event', {
          event_type: 'text',
          timestamp: new Date().toISOString(),
          session_id: '6f1c2b1e-0d4a-4a7e-9a55-2f7f0f0c1a11',
          run_id: '0b8f7c4e-3c2d-4f11-8e0a-5d6c7b8a9f10',
          seq,
          content: `⟨t=${epochNow().toFixed(3)}⟩tok${seq} `,
          is_final: false,
        });
        if (seq >= count) clearInterval(timer);
      }, intervalMs);
      socket.once('disconnect', () => clearInterval(timer));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${JSON.stringify({ port: (http.address() as AddressInfo).port })}\n`);
  const shutdown = () => io.close(() => process.exit(0));
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  process.once('disconnect', shutdown);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`socketio-floor-server: ${String(err)}\n`);
    process.exit(1);
  });
}
