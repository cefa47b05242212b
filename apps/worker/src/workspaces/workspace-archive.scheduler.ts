import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { RedisClient } from '#transport/redis-connection.js';
import type { Logger } from 'pino';
import { LOGGER, REDIS, SETTINGS } from '../infra/tokens.js';
import type { WorkerSettings } from '../infra/worker-config.js';
import { WorkspaceArchiver } from './workspace-archiver.js';

/**
 * Runs the workspace archiver on every worker, once at startup and then every
 * DATAAGENT_WORKSPACE_ARCHIVE_INTERVAL_SECONDS; its lease lets one worker sweep per interval.
 * Trying at startup too means workers restarted more often than the interval still sweep.
 */
@Injectable()
export class WorkspaceArchiveScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<unknown>;
  private readonly stop = new AbortController();

  constructor(
    @Inject(SETTINGS) private readonly settings: WorkerSettings,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  onApplicationBootstrap(): void {
    const { rootTemplate, archiveDays, archiveIntervalSeconds } = this.settings.workspace;
    if (archiveDays === 0) return;
    const intervalMs = archiveIntervalSeconds * 1000;
    const archiver = new WorkspaceArchiver({ redis: this.redis, rootTemplate, archiveDays, intervalMs, logger: this.logger });
    const sweep = () => {
      this.sweeping ??= archiver
        .sweep(this.stop.signal)
        .catch((err: unknown) => this.logger.warn({ err }, 'workspace archive sweep failed'))
        .finally(() => (this.sweeping = undefined));
    };
    sweep();
    this.timer = setInterval(sweep, intervalMs);
    this.timer.unref();
  }

  /** Lets a sweep finish the workspace it is packing; the rest wait for the next one. */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    this.stop.abort();
    await this.sweeping;
  }
}
