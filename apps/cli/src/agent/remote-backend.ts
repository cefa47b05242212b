import { io, type Socket } from 'socket.io-client';
import type { EventDict } from '#core/events/execution-event.js';
import type { ApprovalMode } from '../hitl/approval-mode.js';
import type { AgentBackend } from './agent-backend.js';
import { EventQueue } from './event-queue.js';

/** Thrown when the gateway cannot be reached, refuses the key or a message, or the connection drops mid-run. */
export class GatewayError extends Error {}

export interface RemoteOptions {
  server: string;
  apiKey?: string;
  assistantId: string;
  approvals: ApprovalMode;
  resume?: string;
}

interface Ack {
  ok: boolean;
  session_id?: string;
  run_id?: string;
  error_code?: string;
  message?: string;
}

/** A DataAgent gateway over Socket.IO (`/chat`): the run happens on its workers. */
export class RemoteBackend implements AgentBackend {
  sessionId: string | undefined;

  private constructor(private readonly socket: Socket, private readonly options: RemoteOptions) {
    this.sessionId = options.resume;
  }

  /** @throws GatewayError when the connection fails (unreachable, bad key). */
  static async connect(options: RemoteOptions): Promise<RemoteBackend> {
    const socket = io(new URL('/chat', options.server).href, {
      auth: options.apiKey ? { apiKey: options.apiKey } : {},
      transports: ['websocket'],
      reconnection: false,
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('connect_error', (err: Error & { data?: { message?: string } }) => {
        socket.close();
        reject(new GatewayError(`cannot connect to ${options.server}: ${err.data?.message ?? err.message}`));
      });
    });
    return new RemoteBackend(socket, options);
  }

  async *run(message: string, signal: AbortSignal): AsyncIterable<EventDict> {
    const queue = new EventQueue<EventDict>();
    // Events may arrive before the acknowledgement names the run: keep them all, filter after.
    const onEvent = (e: EventDict) => queue.push(e);
    let lost: string | undefined;
    const onDisconnect = (reason: string) => {
      lost = reason;
      queue.end();
    };
    this.socket.on('event', onEvent);
    this.socket.on('disconnect', onDisconnect);
    try {
      const payload = { message, assistant_id: this.options.assistantId, ...(this.sessionId ? { session_id: this.sessionId } : {}) };
      const ack = (await this.socket.emitWithAck('message', { type: 'chat', payload })) as Ack;
      if (!ack.ok || !ack.run_id) throw new GatewayError(`the gateway refused the message: ${ack.error_code ?? 'unknown'}${ack.message ? ` (${ack.message})` : ''}`);
      this.sessionId = ack.session_id;
      const cancel = () => void this.socket.emit('message', { type: 'cancel', payload: { session_id: ack.session_id } });
      if (signal.aborted) cancel();
      signal.addEventListener('abort', cancel, { once: true });
      try {
        for await (const event of queue) {
          if (event.run_id !== ack.run_id) continue;
          yield event;
          if (event.event_type === 'hitl_request') {
            const decision = this.options.approvals === 'approve_all' ? 'approve_all' : 'reject';
            this.socket.emit('message', { type: 'hitl_decision', payload: { request_id: event.request_id, decision } });
          }
          if (event.event_type === 'done') return;
        }
        throw new GatewayError(`lost the connection to the gateway (${lost ?? 'closed'}) before the run ended`);
      } finally {
        signal.removeEventListener('abort', cancel);
      }
    } finally {
      this.socket.off('event', onEvent);
      this.socket.off('disconnect', onDisconnect);
    }
  }

  async close(): Promise<void> {
    this.socket.close();
  }
}
