import { Inject, Logger } from '@nestjs/common';
import { ConnectedSocket, MessageBody, type OnGatewayConnection, type OnGatewayDisconnect, type OnGatewayInit, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import type { Namespace, Socket } from 'socket.io';
import type { Caller } from '#core/auth/caller.js';
import { Metrics } from '#telemetry/metrics.js';
import { ApiKeyService } from '../../auth/api-key.service.js';
import { ApiError } from '../../common/api-error.js';
import { toApiError } from '../../common/api-exception.filter.js';
import { ChatConnection, type MessageAck } from './chat-connection.js';
import { DROP_GRACE_MS, peerOf } from '../../runs/client-limits.js';
import { rawEventSender } from './raw-socket-event.js';
import { RunsService } from '../../runs/runs.service.js';
import { ControlService } from '../../runs/run-control.service.js';
import type { GatewaySettings } from '../../infra/gateway-config.js';
import { SETTINGS } from '../../infra/tokens.js';
import { UserSockets } from './user-sockets.js';
import { StreamQuota } from '../../quotas/stream-quota.js';

interface SocketData {
  caller: Caller;
  connection?: ChatConnection;
  /** Stops this socket's user events (mcp_config_changed). */
  leaveUserEvents?: () => void;
}

/** Socket.IO namespace /chat: {type, payload} in as `message`, event dicts out as `event`. */
@WebSocketGateway({ namespace: '/chat' })
export class ChatSocketGateway implements OnGatewayInit, OnGatewayConnection, OnGatewayDisconnect {
  private readonly logger = new Logger('socket.io');

  constructor(
    private readonly runs: RunsService,
    private readonly control: ControlService,
    private readonly keys: ApiKeyService,
    private readonly userSockets: UserSockets,
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
    private readonly metrics: Metrics,
    private readonly streams: StreamQuota,
  ) {}

  afterInit(namespace: Namespace): void {
    namespace.use((socket, next) => {
      const header = socket.handshake.headers['x-api-key'];
      const key = (socket.handshake.auth?.apiKey as string | undefined) ?? (Array.isArray(header) ? header[0] : header);
      void this.keys
        .resolve(key)
        .then(async (caller) => {
          (socket.data as SocketData).caller = caller;
          // Connected only once user events published from now on reach this socket.
          await this.userSockets.ready();
          // Held as long as the engine.io connection lives, whether or not the namespace connects.
          const release = await this.streams.take(caller);
          socket.conn.once('close', release);
          socket.once('disconnect', release);
          if (socket.conn.readyState === 'closed') release();
          next();
        })
        .catch((err: unknown) => {
          const error = err instanceof ApiError ? err : toApiError(err);
          next(Object.assign(new Error(error.message), { data: error.toBody() }));
        });
    });
  }

  handleConnection(socket: Socket): void {
    const data = socket.data as SocketData;
    this.metrics.openSockets.labels('socketio').inc();
    const queued = queuedBytes(socket);
    const { clientBufferMaxBytes, clientMessagesPerSecond } = this.settings.server;
    const sendRaw = rawEventSender(socket, 'event');
    data.connection = new ChatConnection(
      this.runs,
      this.control,
      data.caller,
      {
        event: (event, raw) => (raw === undefined ? socket.emit('event', event) : sendRaw(raw)),
        pong: (body) => socket.emit('pong', body),
        bufferedBytes: queued,
        peer: peerOf(socket.request.socket),
        drop: (reason) => {
          socket.emit('event', reason);
          socket.disconnect(true);
          // engine.io closes only once its buffer drains, which a stalled client never lets happen.
          setTimeout(() => {
            socket.conn.close(true);
            (socket.conn.transport as unknown as { socket?: { terminate?: () => void } }).socket?.terminate?.();
          }, DROP_GRACE_MS).unref();
        },
      },
      this.logger,
      { bufferMaxBytes: clientBufferMaxBytes, messagesPerSecond: clientMessagesPerSecond },
    );
    data.leaveUserEvents = this.userSockets.add(data.caller, (event) => {
      socket.emit('event', event);
      data.connection?.checkBuffer(null, 0);
    });
  }

  handleDisconnect(socket: Socket): void {
    const data = socket.data as SocketData;
    this.metrics.openSockets.labels('socketio').dec();
    data.leaveUserEvents?.();
    data.connection?.close();
  }

  @SubscribeMessage('message')
  /** The returned acknowledgement reaches clients that emit with a callback. */
  onMessage(@ConnectedSocket() socket: Socket, @MessageBody() body: unknown): Promise<MessageAck> | undefined {
    return (socket.data as SocketData).connection?.handle(body);
  }
}

/**
 * Bytes the client has not taken yet: packets engine.io holds (they wait while the transport is
 * still writing) plus what the websocket transport has written but the socket not sent.
 */
function queuedBytes(socket: Socket): () => number {
  const conn = socket.conn;
  const size = (packet: { data?: unknown }) =>
    typeof packet.data === 'string' ? packet.data.length : Buffer.isBuffer(packet.data) ? packet.data.length : 0;
  let held = 0;
  conn.on('packetCreate', (packet: { data?: unknown }) => (held += size(packet)));
  conn.on('flush', (packets: Array<{ data?: unknown }>) => {
    for (const packet of packets) held -= size(packet);
  });
  return () => held + ((conn.transport as unknown as { socket?: { bufferedAmount?: number } }).socket?.bufferedAmount ?? 0);
}
