import { Queue, type ConnectionOptions, type KeepJobs } from 'bullmq';
import { isCluster, type RedisClient } from './redis-connection.js';
import { queuePrefix } from './redis-keys.js';
import type { RunJobData, RunJobs } from '#core/run/run-ports.js';

export const RUN_JOB_NAME = 'run';

/** Runs in the queue by state; `pending` is all of them: the runs that need a worker slot now or soon. */
export interface QueueDepth {
  waiting: number;
  prioritized: number;
  delayed: number;
  active: number;
  pending: number;
}

/** How many finished jobs Redis keeps (`count`) and for how long (`age`, seconds), per outcome. */
export interface FinishedJobRetention {
  completed: KeepJobs;
  failed: KeepJobs;
}

/**
 * Finished run jobs are bookkeeping (the run's events are in its log, its messages in the
 * store), kept a while for inspection. Both lists are bounded by count as well as age, so a
 * burst of runs, or of failures, cannot fill Redis.
 */
export const RUN_JOB_RETENTION: FinishedJobRetention = {
  completed: { count: 1_000, age: 3600 },
  failed: { count: 1_000, age: 24 * 3600 },
};

/** Producer side: the gateway adds runs and removes queued ones. */
export class RunQueue implements RunJobs {
  readonly queue: Queue<RunJobData>;

  /** @param retention Finished jobs kept; {@link RUN_JOB_RETENTION} unless given. */
  constructor(connection: RedisClient, name: string, retention: FinishedJobRetention = RUN_JOB_RETENTION) {
    this.queue = new Queue<RunJobData>(name, {
      connection: connection as unknown as ConnectionOptions,
      prefix: queuePrefix(isCluster(connection)),
      defaultJobOptions: {
        attempts: 1,
        removeOnComplete: retention.completed,
        removeOnFail: retention.failed,
      },
    });
  }

  async enqueue(data: RunJobData): Promise<void> {
    await this.queue.add(RUN_JOB_NAME, data, { jobId: data.runId });
  }

  /**
   * Removes a run's job unless a worker holds it, in one script (BullMQ's remove refuses a locked
   * job). Returns false when a worker holds it; true when it was waiting and is gone now, or there
   * is no job (not added yet, or no longer kept).
   */
  async removeWaiting(runId: string): Promise<boolean> {
    return (await this.queue.remove(runId)) === 1;
  }

  /**
   * Moves a parked run's job (delayed until its wait expires) to the queue now. Does nothing
   * when the job is not delayed (not parked yet, already woken, or gone).
   * @returns whether it moved the job.
   */
  async promote(runId: string): Promise<boolean> {
    const job = await this.queue.getJob(runId);
    if (!job) return false;
    try {
      await job.promote();
      return true;
    } catch {
      // Not delayed (any more): someone else woke it, or a worker holds it.
      return false;
    }
  }

  /** The run's job state ('waiting', 'active', 'completed', 'failed', ...; 'unknown' when there is none). */
  async jobState(runId: string): Promise<string> {
    return this.queue.getJobState(runId);
  }

  /** Runs waiting plus running, for admission control. */
  async pendingCount(): Promise<number> {
    return (await this.depth()).pending;
  }

  /**
   * The queue's runs by state, read in one Redis script (a consistent snapshot). BullMQ keeps
   * each state in a key of its own: a run deferred behind its session's earlier run is
   * `delayed`, one added with a priority `prioritized`, so the `wait` list alone undercounts.
   */
  async depth(): Promise<QueueDepth> {
    const { waiting = 0, prioritized = 0, delayed = 0, active = 0 } = await this.queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active');
    return { waiting, prioritized, delayed, active, pending: waiting + prioritized + delayed + active };
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
