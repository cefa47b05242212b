import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createRunConsumer, type RunJobData } from '#transport/run-queue.js';
import { createRedis } from '#transport/redis-connection.js';
import { LOGGER, SETTINGS } from '../infra/tokens.js';
import type { WorkerSettings } from '../infra/worker-config.js';
import { EventArchiver } from './event-archiver.js';
import { RunRunner } from './run-runner.js';

/** Takes runs from the queue and hands each to the runner; drains on shutdown. */
@Injectable()
export class RunProcessor implements OnApplicationBootstrap, OnApplicationShutdown {
  private consumer?: Worker<RunJobData>;
  private connection?: Redis;

  constructor(
    @Inject(SETTINGS) private readonly settings: WorkerSettings,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly runner: RunRunner,
    private readonly archiver: EventArchiver,
  ) {}

  onApplicationBootstrap(): void {
    const { redis, worker } = this.settings;
    this.connection = createRedis(redis.url, `worker-queue-${worker.workerId}`);
    this.consumer = createRunConsumer(this.connection, { name: redis.queueName, concurrency: worker.concurrency }, (job) => this.runner.run(job.data));
    this.consumer.on('error', (err) => this.logger.error({ err }, 'queue consumer error'));
    this.consumer.on('failed', (job, err) => this.logger.error({ run_id: job?.id, err }, 'run job failed'));
    this.logger.info({ queue: redis.queueName, concurrency: worker.concurrency, worker_id: worker.workerId }, 'worker consuming runs');
  }

  /** Stops taking runs and waits for the ones in flight (graceful drain on SIGTERM). */
  async onApplicationShutdown(signal?: string): Promise<void> {
    this.logger.info({ signal, active: this.runner.activeCount }, 'worker draining');
    await this.consumer?.close();
    await this.archiver.close();
    await this.connection?.quit().catch(() => undefined);
  }
}
