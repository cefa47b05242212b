import { performance } from 'node:perf_hooks';
import { io, type Socket } from 'socket.io-client';
import type { EventDict } from '#core/events/execution-event.js';
import { ExchangeError, type ChatTransport, type Exchange, type ServerTarget } from './chat-transport.js';
import { RunEvents, type MessageAck } from './run-events.js';

/**
 * Socket.IO's `/chat` namespace: one socket per slot, kept across its questions (as a browser
 * keeps one), opened again if it drops. Each question is a `chat` message without a session,
 * so the gateway starts a new one.
 */
export class SocketIoTransport implements ChatTransport {
  private socket?: Socket;

  constructor(private readonly target: ServerTarget) {}

  async ask(message: string, signal: AbortSignal): Promise<Exchange> {
    const socket = await this.connect(signal);
    const start = performance.now();
    const run = new RunEvents(start);
    return new Promise<Exchange>((resolve, reject) => {
      const finish = (outcome: Exchange | Error) => {
        socket.off('event', onEvent);
        socket.off('disconnect', onDisconnect);
        signal.removeEventListener('abort', onAbort);
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      const settle = () => {
        const exchange = run.exchange();
        if (exchange) finish(exchange);
      };
      const onEvent = (event: EventDict) => {
        run.add(event);
        settle();
      };
      const onDisconnect = (reason: string) => {
        this.socket = undefined;
        finish(new ExchangeError(`the socket closed before the run ended: ${reason}`));
      };
      const onAbort = () => {
        // The run would go on without anyone reading it.
        if (run.sessionId) socket.emit('message', { type: 'cancel', payload: { session_id: run.sessionId } });
        finish(signal.reason as Error);
      };
      socket.on('event', onEvent);
      socket.once('disconnect', onDisconnect);
      signal.addEventListener('abort', onAbort, { once: true });
      socket.emit('message', { type: 'chat', payload: { message, assistant_id: this.target.assistantId } }, (ack: MessageAck) => {
        const refused = run.acknowledge(ack);
        if (refused) finish(refused);
        else settle();
      });
    });
  }

  async close(): Promise<void> {
    this.socket?.disconnect();
    this.socket = undefined;
  }

  private async connect(signal: AbortSignal): Promise<Socket> {
    if (this.socket?.connected) return this.socket;
    const socket = io(`${this.target.baseUrl}/chat`, {
      transports: ['websocket'],
      auth: this.target.apiKey ? { apiKey: this.target.apiKey } : {},
      reconnection: false,
      forceNew: true,
    });
    try {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(signal.reason as Error);
        signal.addEventListener('abort', onAbort, { once: true });
        socket.once('connect', () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        });
        socket.once('connect_error', (err: Error & { data?: { error_code?: string; message?: string } }) => {
          signal.removeEventListener('abort', onAbort);
          const code = err.data?.error_code;
          reject(new ExchangeError(`cannot connect to Socket.IO /chat: ${code ? `${code}: ${err.data?.message ?? ''}` : err.message}`, code));
        });
      });
    } catch (err) {
      socket.disconnect();
      throw err;
    }
    this.socket = socket;
    return socket;
  }
}
