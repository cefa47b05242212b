import { Queue, Worker, type Job, type ConnectionOptions } from 'bullmq';
import type { Redis } from 'ioredis';

/** The payload of a run job. The job's id is the run id. */
export interface RunJobData {
  runId: string;
  sessionId: string;
  tenantId: string;
  userId: string;
  assistantId: string;
  message: string;
  requestId?: string;
  enqueuedAt: number;
  /**
   * Runs of the same session this one waits for (DATAAGENT_MULTITASK=enqueue|interrupt):
   * it starts once each has its done, so its events never interleave with theirs.
   */
  afterRuns?: string[];
}

export const RUN_JOB_NAME = 'run';

/** Producer side: the gateway adds runs and removes queued ones. */
export class RunQueue {
  readonly queue: Queue<RunJobData>;

  constructor(connection: Redis, name: string) {
    this.queue = new Queue<RunJobData>(name, {
      connection: connection as unknown as ConnectionOptions,
      defaultJobOptions: {
        attempts: 1,
        removeOnComplete: { age: 3600, count: 10_000 },
        removeOnFail: { age: 24 * 3600 },
      },
    });
  }

  async enqueue(data: RunJobData): Promise<void> {
    await this.queue.add(RUN_JOB_NAME, data, { jobId: data.runId });
  }

  /**
   * Removes a run that is still waiting. Returns false when no waiting job was removed
   * (already taken by a worker, or unknown).
   */
  async removeWaiting(runId: string): Promise<boolean> {
    const job = await this.queue.getJob(runId);
    if (!job) return false;
    try {
      const state = await job.getState();
      if (state !== 'waiting' && state !== 'prioritized' && state !== 'delayed') return false;
      await job.remove();
      return true;
    } catch {
      return false;
    }
  }

  /** Runs waiting plus running, for admission control. */
  async pendingCount(): Promise<number> {
    const counts = await this.queue.getJobCounts('waiting', 'active', 'prioritized', 'delayed');
    return Object.values(counts).reduce((a, b) => a + b, 0);
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}

export interface RunConsumerOptions {
  name: string;
  concurrency: number;
  /** Milliseconds a job lock lasts without renewal before another worker may take it. */
  lockDurationMs?: number;
  /** How often BullMQ looks for jobs whose worker vanished. */
  stalledIntervalMs?: number;
}

/** Consumer side: a worker process takes runs, `concurrency` at a time. */
export function createRunConsumer(
  connection: Redis,
  options: RunConsumerOptions,
  handle: (job: Job<RunJobData>, token?: string) => Promise<void>,
): Worker<RunJobData> {
  return new Worker<RunJobData>(options.name, handle, {
    connection: connection as unknown as ConnectionOptions,
    concurrency: options.concurrency,
    lockDuration: options.lockDurationMs ?? 30_000,
    stalledInterval: options.stalledIntervalMs ?? 30_000,
    maxStalledCount: 2,
  });
}
