import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Caller } from '#core/session/caller.js';
import { ApiKeyService } from '../auth/api-key.service.js';
import { ApiError } from '../common/api-error.js';
import { ControlService } from '../control/control.service.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { SETTINGS } from '../infra/tokens.js';
import { SessionAccess } from '../sessions/session-access.service.js';
import { ChatConnection } from './chat-connection.js';
import { ChatService } from './chat.service.js';

const PATH = /^\/ws\/chat\/([A-Za-z0-9_-]{1,64})\/?$/;

/** Close codes: 4401 unauthorized, 4404 unknown or foreign session, 4408 heartbeat missed. */
export const WS_CLOSE = { unauthorized: 4401, notFound: 4404, idle: 4408, shuttingDown: 1001 } as const;

/**
 * Plain WebSocket at /ws/chat/{session_id}: the same {type, payload} JSON as Socket.IO
 * and the same event dicts back, through the same ChatConnection.
 */
@Injectable()
export class WsChatServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ws');
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 2 * 1024 * 1024 });
  private heartbeat?: NodeJS.Timeout;

  constructor(
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
    private readonly adapterHost: HttpAdapterHost,
    private readonly keys: ApiKeyService,
    private readonly access: SessionAccess,
    private readonly chat: ChatService,
    private readonly control: ControlService,
  ) {}

  onApplicationBootstrap(): void {
    const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = new URL(req.url ?? '/', 'http://gateway').pathname;
      if (!path.startsWith('/ws/')) return; // Socket.IO handles its own path
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        // noServer mode emits no 'connection' itself; the heartbeat relies on it.
        this.wss.emit('connection', ws, req);
        void this.accept(ws, req);
      });
    });
    const alive = new WeakMap<WebSocket, boolean>();
    this.wss.on('connection', (ws) => {
      alive.set(ws, true);
      ws.on('pong', () => alive.set(ws, true));
      ws.on('message', () => alive.set(ws, true));
    });
    this.heartbeat = setInterval(() => {
      for (const ws of this.wss.clients) {
        if (!alive.get(ws)) {
          ws.close(WS_CLOSE.idle, 'heartbeat missed');
          setTimeout(() => ws.terminate(), 1_000).unref();
          continue;
        }
        alive.set(ws, false);
        ws.ping();
      }
    }, this.settings.server.wsHeartbeatSeconds * 1000);
    this.heartbeat.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.heartbeat);
    for (const ws of this.wss.clients) ws.close(WS_CLOSE.shuttingDown, 'gateway shutting down');
    this.wss.close();
  }

  private async accept(ws: WebSocket, req: IncomingMessage): Promise<void> {
    // Messages sent right after the upgrade wait here until the caller is checked.
    const early: Array<{ data: unknown; isBinary: boolean }> = [];
    let onMessage = (data: unknown, isBinary: boolean) => void early.push({ data, isBinary });
    ws.on('message', (data, isBinary) => onMessage(data, isBinary));
    const url = new URL(req.url ?? '/', 'http://gateway');
    const match = PATH.exec(url.pathname);
    if (!match) return ws.close(WS_CLOSE.notFound, 'unknown path: use /ws/chat/{session_id}');
    const sessionId = match[1];
    let caller: Caller;
    try {
      const header = req.headers['x-api-key'];
      caller = this.keys.resolve((Array.isArray(header) ? header[0] : header) ?? url.searchParams.get('api_key') ?? undefined);
      await this.access.getOwned(caller, sessionId);
    } catch (err) {
      const error = err instanceof ApiError ? err : new ApiError(500, 'internal_error', 'Internal error');
      return ws.close(error.status === 401 ? WS_CLOSE.unauthorized : WS_CLOSE.notFound, `${error.errorCode}: ${error.message}`.slice(0, 120));
    }
    const send = (body: unknown) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(body));
    };
    const connection = new ChatConnection(this.chat, this.control, caller, { event: send, pong: (body) => send({ type: 'pong', ...body }) }, this.logger, sessionId);
    onMessage = (data, isBinary) => {
      const raw = isBinary ? data : Buffer.isBuffer(data) ? data.toString() : String(data);
      void connection.handle(raw).then((ack) => send({ type: 'ack', ...ack }));
    };
    for (const m of early.splice(0)) onMessage(m.data, m.isBinary);
    ws.on('close', () => connection.close());
    ws.on('error', () => connection.close());
  }
}
