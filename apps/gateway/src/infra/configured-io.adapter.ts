import type { IncomingMessage } from 'node:http';
import type { INestApplicationContext } from '@nestjs/common';
import { IoAdapter } from '@nestjs/platform-socket.io';
import type { ServerOptions } from 'socket.io';
import type { GatewaySettings } from './gateway-config.js';
import type { OriginPolicy } from './origin-policy.js';

/**
 * Socket.IO with the gateway's origin policy (CORS and a Host/Origin check on every handshake
 * request) and a buffer large enough to answer oversize messages with an error. With several
 * gateway processes (DATAAGENT_WORKERS > 1) it refuses long-polling: its requests would land on
 * processes that do not hold the session, and there are no sticky sessions.
 */
export class ConfiguredIoAdapter extends IoAdapter {
  constructor(app: INestApplicationContext, private readonly settings: GatewaySettings, private readonly origins: OriginPolicy) {
    super(app);
  }

  override createIOServer(port: number, options?: ServerOptions) {
    return super.createIOServer(port, {
      ...options,
      cors: this.origins.corsOptions(),
      allowRequest: (req: IncomingMessage, callback: (err: string | null | undefined, success: boolean) => void) => {
        // engine.io answers a refused handshake 403 {"code": 4, "message": <this text>}.
        const refusal = pollingRefusal(req, this.settings.server.workers);
        if (refusal) return callback(refusal, false);
        try {
          this.origins.check(req.headers);
          callback(null, true);
        } catch (err) {
          callback((err as Error).message, false);
        }
      },
      maxHttpBufferSize: Math.max(2 * 1024 * 1024, this.settings.server.maxMessageBytes * 2),
      pingInterval: 25_000,
      pingTimeout: 20_000,
    } as ServerOptions);
  }
}

/**
 * Why a Socket.IO handshake over long-polling is refused when `processes` gateway processes share
 * the port; null when it is allowed (one process, or the websocket transport).
 */
export function pollingRefusal(req: Pick<IncomingMessage, 'url'>, processes: number): string | null {
  if (processes <= 1) return null;
  const transport = new URL(req.url ?? '/', 'http://gateway').searchParams.get('transport');
  if (transport !== 'polling') return null;
  return `This gateway runs ${processes} processes without sticky sessions, so Socket.IO long-polling is refused: connect with transports: ['websocket'] (or tryAllTransports: true)`;
}
