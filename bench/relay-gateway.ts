/**
 * The gateway half of the bare relay (bare-relay.ts): a plain Socket.IO server (no NestJS)
 * fed by Redis pub/sub, speaking just enough of DataAgent's socket protocol for the bench's
 * chat clients (chat-load.ts): on the `/chat` namespace a `message` {type: 'chat', payload:
 * {message}} subscribes to a new stream's channel, PUBLISHes a start request for the relay
 * worker and acknowledges; every message on the channel is parsed and emitted to the socket as
 * an `event`, and the channel is dropped after the stream's `done`. No auth, queue, log,
 * storage, logging or metrics.
 *
 * `node dist/bench/relay-gateway.js <redis url>` prints `{"port":N}` and serves on 127.0.0.1
 * until SIGTERM or its parent's IPC channel closes.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { Server, type Socket } from 'socket.io';
import { RELAY_START_CHANNEL, relayStreamChannel, type RelayStartRequest } from './relay-channels.js';

interface ChatMessage {
  type?: string;
  payload?: { message?: string };
}

async function main(): Promise<void> {
  const redisUrl = process.argv[2];
  if (!redisUrl) throw new Error('usage: relay-gateway.js <redis url>');
  const publisher = new Redis(redisUrl);
  const subscriber = new Redis(redisUrl);
  const listeners = new Map<string, Socket>();
  subscriber.on('message', (channel: string, raw: string) => {
    const event = JSON.parse(raw) as { event_type: string };
    listeners.get(channel)?.emit('event', event);
    if (event.event_type !== 'done') return;
    listeners.delete(channel);
    void subscriber.unsubscribe(channel);
  });

  const http = createServer();
  const io = new Server(http, { transports: ['websocket'] });
  io.of('/chat').on('connection', (socket) => {
    const mine = new Set<string>();
    socket.on('message', async (message: ChatMessage, ack?: (answer: Record<string, unknown>) => void) => {
      if (message?.type !== 'chat' || typeof message.payload?.message !== 'string') {
        ack?.({ ok: false, error_code: 'invalid_request' });
        return;
      }
      const id = randomUUID();
      const channel = relayStreamChannel(id);
      listeners.set(channel, socket);
      mine.add(channel);
      await subscriber.subscribe(channel);
      const start: RelayStartRequest = { id, message: message.payload.message };
      await publisher.publish(RELAY_START_CHANNEL, JSON.stringify(start));
      ack?.({ ok: true, session_id: id, run_id: id });
    });
    socket.once('disconnect', () => {
      for (const channel of mine) {
        if (listeners.get(channel) !== socket) continue;
        listeners.delete(channel);
        void subscriber.unsubscribe(channel);
      }
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${JSON.stringify({ port: (http.address() as AddressInfo).port })}\n`);
  const shutdown = () =>
    io.close(() => {
      subscriber.disconnect();
      publisher.disconnect();
      process.exit(0);
    });
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  process.once('disconnect', shutdown);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`relay-gateway: ${String(err)}\n`);
    process.exit(1);
  });
}
