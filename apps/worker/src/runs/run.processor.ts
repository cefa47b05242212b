import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DelayedError, WaitingError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { RunHandoff } from '#core/engine/run-journal.js';
import { ControlBus } from '#transport/control-bus.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { WorkerRunLifecycle } from '#core/run/run-lifecycle.js';
import { ParkedRunDeadlines } from '#transport/parked-run-deadlines.js';
import { ParkedRunExpiry } from '#transport/parked-run-expiry.js';
import { RunQueue } from '#transport/run-queue.js';
import { RunConsumer } from '#transport/run-consumer.js';
import { createRedis, pingRedis, type RedisClient } from '#transport/redis-connection.js';
import { DecisionWaiters } from '../hitl/decision-waiters.js';
import { LOGGER, MCP, QUEUE_REDIS, REDIS, SETTINGS, STORE } from '../infra/tokens.js';
import type { McpRuntime } from '../mcp/mcp-runtime.js';
import type { WorkerSettings } from '../infra/worker-config.js';
import { EventArchiver } from './event-archiver.js';
import { PendingWrites } from './pending-writes.js';
import { RunReaper } from './run-reaper.js';
import { RunRunner } from './run-runner.js';
import type { RunJobData } from '#core/run/run-ports.js';

/**
 * How often workers look for runs whose worker died (one check runs at a time across workers):
 * a dead worker's run continues at most one job lock plus this long after its last renewal.
 */
export function stalledCheckInterval(jobLockMs: number): number {
  return Math.max(100, Math.min(500, Math.floor(jobLockMs / 6)));
}

/**
 * Takes runs from the queue and hands each to the runner; listens for control messages
 * (cancel, HITL decisions, elicitation answers); drains on shutdown.
 */
@Injectable()
export class RunProcessor implements OnApplicationBootstrap, OnApplicationShutdown {
  private consumer?: RunConsumer;
  private connection?: RedisClient;
  private subscriber?: RedisClient;
  private reaperTimer?: NodeJS.Timeout;
  private expiry?: ParkedRunExpiry;
  private draining = false;

  constructor(
    @Inject(SETTINGS) private readonly settings: WorkerSettings,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly runner: RunRunner,
    private readonly archiver: EventArchiver,
    private readonly waiters: DecisionWaiters,
    private readonly pendingWrites: PendingWrites,
    @Inject(STORE) private readonly store: ConversationStore,
    private readonly lifecycle: WorkerRunLifecycle,
    private readonly queue: RunQueue,
    @Inject(QUEUE_REDIS) private readonly queueRedis: RedisClient,
    @Inject(MCP) private readonly mcp: McpRuntime,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { redis, worker } = this.settings;
    this.subscriber = createRedis(redis, `worker-control-${worker.workerId}`);
    await new ControlBus(this.redis, this.subscriber).listen((message) => {
      if (message.type === 'cancel') this.runner.cancel(message.run_id, message.requested_at);
      else this.waiters.wake(message.request_id);
    });
    this.connection = createRedis(redis, `worker-queue-${worker.workerId}`);
    this.consumer = new RunConsumer(
      this.connection,
      { name: redis.queueName, concurrency: worker.concurrency, lockDurationMs: worker.jobLockMs, stalledIntervalMs: stalledCheckInterval(worker.jobLockMs) },
      (job, token) => this.process(job, token),
    );
    this.consumer.on('error', (err) => this.logger.error({ err }, 'queue consumer error'));
    // Another worker may take a run whose lock this one could not renew: stop it here at once.
    this.consumer.on('lockRenewalFailed', (runIds) => {
      for (const runId of runIds) if (this.runner.abort(runId, new RunHandoff('lock_lost'))) this.logger.warn({ run_id: runId }, 'lost the run lock; stopping the run here');
    });
    this.consumer.on('failed', (job, err) => this.logger.error({ run_id: job?.id, err }, 'run job failed'));
    const reaper = new RunReaper({ store: this.store, lifecycle: this.lifecycle, redis: this.redis, queue: this.queue, staleMs: 2 * worker.reaperIntervalMs, logger: this.logger });
    let sweeping = false;
    this.reaperTimer = setInterval(() => {
      if (sweeping) return;
      sweeping = true;
      reaper
        .sweep()
        .catch((err: unknown) => this.logger.warn({ err }, 'run reaper sweep failed'))
        .finally(() => (sweeping = false));
    }, worker.reaperIntervalMs);
    this.reaperTimer.unref();
    // Parked runs' questions expire on time: every worker (and gateway) sweeps their deadlines, one at a time.
    this.expiry = new ParkedRunExpiry({ deadlines: new ParkedRunDeadlines(this.redis, redis.queueName), lifecycle: this.lifecycle, logger: this.logger });
    this.expiry.start();
    this.logger.info({ queue: redis.queueName, concurrency: worker.concurrency, worker_id: worker.workerId }, 'worker consuming runs');
  }

  /** The readiness probe's answer: this worker takes runs (its consumer runs, it is not draining) and Redis answers. */
  async ready(): Promise<boolean> {
    return !this.draining && this.consumer?.isRunning() === true && (await pingRedis(this.redis));
  }

  private async process(job: Job<RunJobData>, token?: string): Promise<'ended' | 'lost'> {
    const outcome = await this.runner.run(job.data);
    if (typeof outcome === 'object') {
      // Parked: the job leaves the active set, delayed until the wait expires (the expiry then
      // continues it with no answer); an answer wakes it sooner, and any worker continues it.
      await job.moveToDelayed(outcome.parked.until, token);
      await this.lifecycle.parked(outcome.parked, job.data.runId).catch((err: unknown) => this.logger.warn({ run_id: job.data.runId, err }, 'could not look for an answer that came while the run parked; its expiry continues it'));
      throw new DelayedError();
    }
    if (outcome === 'handed_back') {
      // Back to the queue: another worker continues it from its ledger.
      await job.moveToWait(token);
      throw new WaitingError();
    }
    return outcome === 'lost' ? 'lost' : 'ended';
  }

  /**
   * Graceful drain on SIGTERM: stops taking runs; hands runs that wait for approval back to
   * the queue at once (they continue on another worker); lets the rest finish within
   * DATAAGENT_DRAIN_SECONDS, then hands back whatever is still going.
   */
  async onApplicationShutdown(signal?: string): Promise<void> {
    this.draining = true;
    const drainMs = this.settings.worker.drainSeconds * 1000;
    this.logger.info({ signal, active: this.runner.activeCount, drain_ms: drainMs }, 'worker draining');
    clearInterval(this.reaperTimer);
    this.expiry?.stop();
    const closing = this.consumer?.close();
    this.runner.startDrain();
    const deadline = setTimeout(() => {
      if (this.runner.activeCount > 0) this.logger.warn({ active: this.runner.activeCount }, 'drain deadline: handing the remaining runs back');
      this.runner.handBackAll();
    }, drainMs);
    await closing;
    clearTimeout(deadline);
    // No run holds a connection now: every MCP server's session and process goes.
    await this.mcp.close().catch((err: unknown) => this.logger.warn({ err }, 'closing MCP connections failed'));
    // No run is left to wake or reap: the queue and its connection go.
    await this.queue.close().catch(() => undefined);
    await this.queueRedis.quit().catch(() => undefined);
    await this.archiver.close();
    const lost = await this.pendingWrites.close();
    if (lost > 0) this.logger.error({ lost }, 'database unreachable at shutdown: writes lost');
    await Promise.all([this.connection?.quit(), this.subscriber?.quit()].map((p) => p?.catch(() => undefined)));
  }
}
