import { Logger } from '@nestjs/common';
import { ConnectedSocket, MessageBody, type OnGatewayConnection, type OnGatewayDisconnect, type OnGatewayInit, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import type { Namespace, Socket } from 'socket.io';
import type { Caller } from '#core/session/caller.js';
import { ApiKeyService } from '../auth/api-key.service.js';
import { ApiError } from '../common/api-error.js';
import { ChatConnection, type MessageAck } from './chat-connection.js';
import { ChatService } from './chat.service.js';
import { ControlService } from '../control/control.service.js';

interface SocketData {
  caller: Caller;
  connection?: ChatConnection;
}

/** Socket.IO namespace /chat: {type, payload} in as `message`, event dicts out as `event`. */
@WebSocketGateway({ namespace: '/chat' })
export class ChatSocketGateway implements OnGatewayInit, OnGatewayConnection, OnGatewayDisconnect {
  private readonly logger = new Logger('socket.io');

  constructor(private readonly chat: ChatService, private readonly control: ControlService, private readonly keys: ApiKeyService) {}

  afterInit(namespace: Namespace): void {
    namespace.use((socket, next) => {
      try {
        const header = socket.handshake.headers['x-api-key'];
        const key = (socket.handshake.auth?.apiKey as string | undefined) ?? (Array.isArray(header) ? header[0] : header);
        (socket.data as SocketData).caller = this.keys.resolve(key);
        next();
      } catch (err) {
        const error = err instanceof ApiError ? err : new ApiError(401, 'unauthorized', 'Unauthorized');
        next(Object.assign(new Error(error.message), { data: error.toBody() }));
      }
    });
  }

  handleConnection(socket: Socket): void {
    const data = socket.data as SocketData;
    data.connection = new ChatConnection(this.chat, this.control, data.caller, {
      event: (event) => socket.emit('event', event),
      pong: (body) => socket.emit('pong', body),
    }, this.logger);
  }

  handleDisconnect(socket: Socket): void {
    (socket.data as SocketData).connection?.close();
  }

  @SubscribeMessage('message')
  /** The returned acknowledgement reaches clients that emit with a callback. */
  onMessage(@ConnectedSocket() socket: Socket, @MessageBody() body: unknown): Promise<MessageAck> | undefined {
    return (socket.data as SocketData).connection?.handle(body);
  }
}
