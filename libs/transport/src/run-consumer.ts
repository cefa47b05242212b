import { MetricsTime, Worker, type ConnectionOptions, type Job, type WorkerListener } from 'bullmq';
import { isCluster, type RedisClient } from './redis-connection.js';
import { queuePrefix } from './redis-keys.js';
import { RUN_JOB_RETENTION, type FinishedJobRetention } from './run-queue.js';
import type { RunJobData } from '#core/run/run-ports.js';

/** Slots of one BullMQ Worker of a {@link RunConsumer}: the most jobs it takes before it starts the first of them. */
export const SLOTS_PER_FETCHER = 16;
/** BullMQ Workers of one consumer at most (each holds a blocking Redis connection): past 1024 slots, each Worker gets more. */
export const MAX_FETCHERS = 64;

export interface RunConsumerOptions {
  name: string;
  /** Runs this process holds at once. */
  concurrency: number;
  /** Milliseconds a job lock lasts without renewal before another worker may take it. */
  lockDurationMs?: number;
  /** How often BullMQ looks for jobs whose worker vanished. */
  stalledIntervalMs?: number;
  /** Finished jobs kept when a job does not say (one added without the queue's defaults). */
  retention?: FinishedJobRetention;
  /** Slots per BullMQ Worker; {@link SLOTS_PER_FETCHER} unless given. */
  slotsPerFetcher?: number;
}

type Listeners = WorkerListener<RunJobData>;

/**
 * A worker process's side of the run queue: `concurrency` slots, served by several BullMQ Workers
 * of {@link SLOTS_PER_FETCHER} slots each (more each past {@link MAX_FETCHERS} Workers), over one
 * shared connection plus one blocking connection each.
 *
 * Why several: a BullMQ Worker takes jobs one round trip at a time, and starts none of the jobs
 * it has taken until the queue is empty or its slots are full. One Worker of a thousand slots,
 * under a burst of a thousand runs, spent seconds taking them before it started the first, long
 * enough for the locks of those it held unstarted to lapse, so other workers took them over.
 * Small Workers take jobs side by side (their round trips share the connection's pipeline) and
 * start each after at most {@link SLOTS_PER_FETCHER} takes. Only the first looks for stalled jobs:
 * one look covers the whole queue.
 *
 * When `handle` resolves `ended` (the run has its done), the job's copy of the message is emptied
 * before the job completes; `lost` (another worker has taken the run over) leaves it for that worker.
 */
export class RunConsumer {
  private readonly workers: Worker<RunJobData>[];

  constructor(connection: RedisClient, options: RunConsumerOptions, handle: (job: Job<RunJobData>, token?: string) => Promise<'ended' | 'lost'>) {
    const retention = options.retention ?? RUN_JOB_RETENTION;
    const processJob = async (job: Job<RunJobData>, token?: string) => {
      if ((await handle(job, token)) === 'ended') await forgetMessage(job);
    };
    const perWorker = Math.max(1, options.slotsPerFetcher ?? SLOTS_PER_FETCHER, Math.ceil(options.concurrency / MAX_FETCHERS));
    const count = Math.max(1, Math.ceil(options.concurrency / perWorker));
    this.workers = Array.from({ length: count }, (_, i) => {
      // Slots dealt as evenly as they go: 40 over 3 Workers is 14, 13, 13.
      const slots = Math.floor(options.concurrency / count) + (i < options.concurrency % count ? 1 : 0);
      return new Worker<RunJobData>(options.name, processJob, {
        connection: connection as unknown as ConnectionOptions,
        prefix: queuePrefix(isCluster(connection)),
        concurrency: Math.max(1, slots),
        lockDuration: options.lockDurationMs ?? 30_000,
        stalledInterval: options.stalledIntervalMs ?? 30_000,
        skipStalledCheck: i > 0,
        // A run whose worker keeps dying (one that crashes it every time) fails after this many takeovers; the reaper then ends it.
        maxStalledCount: 5,
        removeOnComplete: retention.completed,
        removeOnFail: retention.failed,
        // Completed and failed totals for the queue's Prometheus export (bullmq_job_completed_total), with a week of per-minute counts.
        metrics: { maxDataPoints: MetricsTime.ONE_WEEK },
      });
    });
  }

  /** BullMQ Workers serving the slots. */
  get fetchers(): number {
    return this.workers.length;
  }

  /** Listens to an event of every BullMQ Worker of this consumer. */
  on<E extends keyof Listeners>(event: E, listener: Listeners[E]): this {
    for (const worker of this.workers) worker.on(event, listener);
    return this;
  }

  /** Whether every Worker is taking jobs. */
  isRunning(): boolean {
    return this.workers.every((worker) => worker.isRunning());
  }

  /** Stops taking jobs and resolves once the jobs being processed have finished. */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.close()));
  }
}

/**
 * Empties an ended run's message: the session's history holds it (and goes with the session),
 * so a job kept for inspection should not hold a second copy. A worker that lost the job's
 * lock meanwhile harms no one: the run's log is sealed, so whoever takes the job over skips
 * it without reading the message. A job that failed keeps it, for diagnosis, within
 * {@link RUN_JOB_RETENTION}. Best effort: a Redis error leaves the message in place.
 */
async function forgetMessage(job: Job<RunJobData>): Promise<void> {
  const { toolResults: _results, ...data } = job.data;
  await job.updateData({ ...data, message: '' }).catch(() => undefined);
}
