import type { RedisClient } from '#transport/redis-connection.js';
import { takeLease } from '#transport/redis-lease.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { redisKeys } from '#transport/redis-keys.js';
import type { WorkerRunLifecycle } from '#core/run/run-lifecycle.js';
import type { RunQueue } from '#transport/run-queue.js';

/** Job states in which someone still owns the run: the reaper leaves those alone (a parked run's job is delayed). */
const ALIVE = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

export interface RunReaperDeps {
  store: Pick<ConversationStore, 'runs'>;
  /** Ends the runs the reaper finds (the only writer of a run's end). */
  lifecycle: Pick<WorkerRunLifecycle, 'reap'>;
  redis: RedisClient;
  queue: Pick<RunQueue, 'jobState'>;
  /** A run is a candidate once it is this old and still active. */
  staleMs: number;
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/**
 * Finds runs that nobody will end: still active in MySQL, but with no live job (the gateway
 * died between writing the run and queueing it, the job failed or passed its stall limit, the
 * worker died holding the final write), and has the lifecycle end each. One worker sweeps at a time.
 */
export class RunReaper {
  constructor(private readonly deps: RunReaperDeps) {}

  /** One sweep, if no other worker is sweeping. @returns how many runs it ended. */
  async sweep(): Promise<number> {
    const { redis, store, staleMs, queue, lifecycle, logger } = this.deps;
    const lease = await takeLease(redis, redisKeys.reaperLock, Math.max(staleMs, 5_000));
    if (!lease) return 0;
    try {
      let ended = 0;
      for (const run of await store.runs.listStale(new Date(Date.now() - staleMs), 100)) {
        const state = await queue.jobState(run.runId);
        if (ALIVE.has(state)) continue;
        if (await lifecycle.reap(run, state)) {
          ended++;
          logger.warn({ run_id: run.runId, job_state: state }, 'ended a run nobody held');
        }
      }
      return ended;
    } finally {
      await lease.release().catch(() => undefined);
    }
  }
}
