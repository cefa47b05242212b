import type { INestApplicationContext } from '@nestjs/common';
import { IoAdapter } from '@nestjs/platform-socket.io';
import type { ServerOptions } from 'socket.io';
import type { GatewaySettings } from './gateway-config.js';

/** Socket.IO with the gateway's CORS origins and a buffer large enough to answer oversize messages with an error. */
export class ConfiguredIoAdapter extends IoAdapter {
  constructor(app: INestApplicationContext, private readonly settings: GatewaySettings) {
    super(app);
  }

  override createIOServer(port: number, options?: ServerOptions) {
    const origins = this.settings.server.corsOrigins;
    return super.createIOServer(port, {
      ...options,
      cors: { origin: origins.includes('*') ? true : origins, credentials: true },
      maxHttpBufferSize: Math.max(2 * 1024 * 1024, this.settings.server.maxMessageBytes * 2),
      pingInterval: 25_000,
      pingTimeout: 20_000,
    } as ServerOptions);
  }
}
