import type { IncomingMessage } from 'node:http';
import type { INestApplicationContext } from '@nestjs/common';
import { IoAdapter } from '@nestjs/platform-socket.io';
import type { ServerOptions } from 'socket.io';
import type { GatewaySettings } from './gateway-config.js';
import type { OriginPolicy } from './origin-policy.js';

/**
 * Socket.IO with the gateway's origin policy (CORS and a Host/Origin check on every handshake
 * request) and a buffer large enough to answer oversize messages with an error.
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
