import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import type { ConversationStore } from '#core/session/session-store.js';
import { pingRedis, type RedisClient } from '#transport/redis-connection.js';
import { Public } from '../auth/api-key.guard.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { REDIS, SETTINGS, STORE } from '../infra/tokens.js';
import { HealthStatus, Liveness, Readiness } from './health-status.dto.js';

const startedAt = Date.now();

/** The probes' paths (status, liveness, readiness): served to any Host and left out of the request log. */
export const HEALTH_PATH = /^\/api\/v1\/health(?:\/live|\/ready)?$/;

@Controller('health')
export class HealthController {
  constructor(
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(STORE) private readonly store: ConversationStore,
  ) {}

  /** Version, uptime and dependencies: 200 when Redis and the database answer, 503 otherwise. */
  @Public()
  @Get()
  @ApiOperation({ summary: 'Status: version, uptime, Redis and the database' })
  @ApiOkResponse({ type: HealthStatus })
  @ApiServiceUnavailableResponse({ description: 'Redis or the database is down: `status: "degraded"`', type: HealthStatus })
  async check(@Res({ passthrough: true }) res: Response): Promise<HealthStatus> {
    const { redis, database } = await this.dependencies();
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

  /** Liveness: the process answers HTTP. It checks no dependency, so a Redis outage restarts no gateway. */
  @Public()
  @Get('live')
  @ApiOperation({ summary: 'Liveness: 200 while the process serves requests' })
  @ApiOkResponse({ type: Liveness })
  live(): Liveness {
    return { status: 'ok' };
  }

  /** Readiness: 200 when Redis and the database answer, 503 otherwise (the load balancer routes elsewhere). */
  @Public()
  @Get('ready')
  @ApiOperation({ summary: 'Readiness: 200 when Redis and the database answer' })
  @ApiOkResponse({ type: Readiness })
  @ApiServiceUnavailableResponse({ description: 'Redis or the database is down: `status: "not_ready"`', type: Readiness })
  async ready(@Res({ passthrough: true }) res: Response): Promise<Readiness> {
    const { redis, database } = await this.dependencies();
    const ready = redis && database;
    res.status(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'not_ready', redis: redis ? 'up' : 'down', database: database ? 'up' : 'down' };
  }

  private async dependencies(): Promise<{ redis: boolean; database: boolean }> {
    const [redis, database] = await Promise.all([pingRedis(this.redis), this.store.ping().catch(() => false)]);
    return { redis, database };
  }
}
