import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ParkedRunDeadlines } from '#transport/parked-run-deadlines.js';
import { ParkedRunExpiry } from '#transport/parked-run-expiry.js';
import type { RedisClient } from '#transport/redis-connection.js';
import { RunLifecycle } from '#core/run/run-lifecycle.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { REDIS, SETTINGS } from '../infra/tokens.js';

/**
 * The gateway's share of the parked runs' expiry sweep (workers run it too; one process sweeps
 * at a time): with every worker down, a question nobody answered still ends its run on time and
 * gives back its tenant slot.
 */
@Injectable()
export class ParkedRunExpiryService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('parked-run-expiry');
  private readonly expiry: ParkedRunExpiry;

  constructor(@Inject(SETTINGS) settings: GatewaySettings, @Inject(REDIS) redis: RedisClient, lifecycle: RunLifecycle) {
    this.expiry = new ParkedRunExpiry({
      deadlines: new ParkedRunDeadlines(redis, settings.redis.queueName),
      lifecycle,
      logger: { info: (obj, msg) => this.logger.log({ ...obj, msg }), warn: (obj, msg) => this.logger.warn({ ...obj, msg }) },
    });
  }

  onModuleInit(): void {
    this.expiry.start();
  }

  onModuleDestroy(): void {
    this.expiry.stop();
  }
}
