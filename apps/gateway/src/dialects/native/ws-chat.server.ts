import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Caller } from '#core/auth/caller.js';
import { Metrics } from '#telemetry/metrics.js';
import { ApiKeyService } from '../../auth/api-key.service.js';
import { ApiError } from '../../common/api-error.js';
import { toApiError } from '../../common/api-exception.filter.js';
import { ControlService } from '../../runs/run-control.service.js';
import type { GatewaySettings } from '../../infra/gateway-config.js';
import { OriginPolicy } from '../../infra/origin-policy.js';
import { SETTINGS } from '../../infra/tokens.js';
import { SessionAccess } from '../../sessions/session-access.service.js';
import { StreamQuota } from '../../quotas/stream-quota.js';
import { ChatConnection } from './chat-connection.js';
import { DROP_GRACE_MS, peerOf } from '../../runs/client-limits.js';
import { RunsService } from '../../runs/runs.service.js';
import { UserSockets } from './user-sockets.js';

const PATH = /^\/ws\/chat\/([A-Za-z0-9_-]{1,64})\/?$/;


/**
 * Close codes: 4401 unauthorized and 4404 unknown session (kept for clients that learnt them;
 * the upgrade itself now answers 401/404), 4408 heartbeat missed, 4409 slow consumer,
 * 1008 too many messages.
 */
export const WS_CLOSE = { unauthorized: 4401, notFound: 4404, idle: 4408, slowConsumer: 4409, policy: 1008, shuttingDown: 1001 } as const;

/**
 * Plain WebSocket at /ws/chat/{session_id}: the same {type, payload} JSON as Socket.IO
 * and the same event dicts back, through the same ChatConnection.
 *
 * Nothing is upgraded before the origin, the key and the session have been checked: a refused
 * client gets an HTTP status and a JSON body, and never a WebSocket. Every socket has an error
 * listener from its first moment, so a malformed frame costs that socket and nothing else.
 */
@Injectable()
export class WsChatServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ws');
  // autoPong off: a flood of pings from a client that never reads would queue a pong for each.
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 2 * 1024 * 1024, autoPong: false });
  private heartbeat?: NodeJS.Timeout;

  constructor(
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
    private readonly adapterHost: HttpAdapterHost,
    private readonly keys: ApiKeyService,
    private readonly access: SessionAccess,
    private readonly runs: RunsService,
    private readonly control: ControlService,
    private readonly origins: OriginPolicy,
    private readonly userSockets: UserSockets,
    private readonly metrics: Metrics,
    private readonly streams: StreamQuota,
  ) {}

  onApplicationBootstrap(): void {
    const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = new URL(req.url ?? '/', 'http://gateway').pathname;
      if (!path.startsWith('/ws/')) return; // Socket.IO handles its own path
      socket.on('error', () => socket.destroy());
      void this.upgrade(req, socket, head, path);
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

  /** Checks origin, key and session, then upgrades; refusals are plain HTTP answers. */
  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, path: string): Promise<void> {
    let caller: Caller;
    let sessionId: string;
    try {
      this.origins.check(req.headers);
      const match = PATH.exec(path);
      if (!match) throw new ApiError(404, 'not_found', 'Unknown path: use /ws/chat/{session_id}');
      sessionId = match[1];
      const url = new URL(req.url ?? '/', 'http://gateway');
      const header = req.headers['x-api-key'];
      caller = await this.keys.resolve((Array.isArray(header) ? header[0] : header) ?? url.searchParams.get('api_key') ?? undefined);
      await this.access.getOwned(caller, sessionId);
      // Opened only once user events published from now on reach this socket.
      await this.userSockets.ready();
      // Held as long as the connection lives, the WebSocket's closing included.
      const release = await this.streams.take(caller);
      socket.once('close', release);
      if (socket.destroyed) release();
    } catch (err) {
      refuse(socket, toApiError(err));
      return;
    }
    if (socket.destroyed) return;
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', (err) => this.logger.debug?.(`websocket closed on a protocol error: ${err.message}`));
      // noServer mode emits no 'connection' itself; the heartbeat relies on it.
      this.wss.emit('connection', ws, req);
      this.accept(ws, caller, sessionId, peerOf(req.socket));
    });
  }

  private accept(ws: WebSocket, caller: Caller, sessionId: string, peer: string): void {
    const { clientBufferMaxBytes, clientMessagesPerSecond } = this.settings.server;
    const send = (body: unknown, raw?: string) => {
      if (ws.readyState === ws.OPEN) ws.send(raw ?? JSON.stringify(body));
    };
    const connection = new ChatConnection(
      this.runs,
      this.control,
      caller,
      {
        event: send,
        pong: (body) => send({ type: 'pong', ...body }),
        bufferedBytes: () => ws.bufferedAmount,
        peer,
        drop: (reason) => {
          send(reason);
          const code = reason.error_code === 'slow_consumer' ? WS_CLOSE.slowConsumer : WS_CLOSE.policy;
          ws.close(code, `${reason.error_code}: ${reason.error_code === 'slow_consumer' ? 'resume from the last seq you received' : 'slow down'}`);
          // A slow client may still be reading; a flooding one has its reason at once.
          setTimeout(() => ws.terminate(), reason.error_code === 'slow_consumer' ? DROP_GRACE_MS : 1_000).unref();
        },
      },
      this.logger,
      { bufferMaxBytes: clientBufferMaxBytes, messagesPerSecond: clientMessagesPerSecond },
      sessionId,
    );
    ws.on('message', (data, isBinary) => {
      const raw = isBinary ? data : Buffer.isBuffer(data) ? data.toString() : String(data);
      void connection.handle(raw).then((ack) => {
        send({ type: 'ack', ...ack });
        connection.checkBuffer(null, 0);
      });
    });
    // Protocol-level pings count against the message rate like any message.
    ws.on('ping', (data) => {
      if (!connection.admit() || ws.readyState !== ws.OPEN) return;
      ws.pong(data);
      connection.checkBuffer(null, 0);
    });
    const leaveUserEvents = this.userSockets.add(caller, (event) => {
      send(event);
      connection.checkBuffer(null, 0);
    });
    const sockets = this.metrics.openSockets.labels('ws');
    sockets.inc();
    let open = true;
    // Both `close` and `error` end a socket; it is counted out once.
    const closed = () => {
      if (open) sockets.dec();
      open = false;
      leaveUserEvents();
      connection.close();
    };
    ws.on('close', closed);
    ws.on('error', closed);
  }
}

/** Answers a refused upgrade with an HTTP status and the usual JSON error body, then closes. */
function refuse(socket: Duplex, error: ApiError): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(error.toBody());
  const headers = Object.entries(error.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n` +
      `Connection: close\r\nContent-Type: application/json; charset=utf-8\r\n${headers}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
