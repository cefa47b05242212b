import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { Redis } from 'ioredis';
import type { ConversationStore } from '#core/session/session-store.js';
import { pingRedis } from '#transport/redis-connection.js';
import { Public } from '../auth/api-key.guard.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { REDIS, SETTINGS, STORE } from '../infra/tokens.js';

const startedAt = Date.now();

@Controller('health')
export class HealthController {
  constructor(
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(STORE) private readonly store: ConversationStore,
  ) {}

  /** Liveness and dependencies: 200 when Redis and the database answer, 503 otherwise. */
  @Public()
  @Get()
  async check(@Res({ passthrough: true }) res: Response) {
    const [redis, database] = await Promise.all([pingRedis(this.redis), this.store.ping().catch(() => false)]);
    const ok = redis && database;
    res.status(ok ? 200 : 503);
    return {
      status: ok ? 'ok' : 'degraded',
      version: this.settings.version,
      uptime: Math.round((Date.now() - startedAt) / 1000),
      redis: redis ? 'up' : 'down',
      database: database ? 'up' : 'down',
      session_store: this.settings.store.sessionStore,
    };
  }
}
