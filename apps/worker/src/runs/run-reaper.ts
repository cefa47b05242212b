import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { DoneEvent, ErrorEvent, type EventDict } from '#core/events/execution-event.js';
import type { ConversationStore, RunRecord } from '#core/session/session-store.js';
import type { RunEventLog } from '#transport/run-event-log.js';
import type { RunLedger } from '#transport/run-ledger.js';
import type { RunQueue } from '#transport/run-queue.js';
import { TenantRunSlots } from '#transport/tenant-run-slots.js';

/** Job states in which someone still owns the run: the reaper leaves those alone. */
const ALIVE = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/** Deletes the sweep lock only if it is still ours. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export interface RunReaperDeps {
  store: ConversationStore;
  log: RunEventLog;
  /** Its epoch fences off a worker that still believes it holds a reaped run. */
  ledger: RunLedger;
  redis: Redis;
  queue: RunQueue;
  /** A run is a candidate once it is this old and still queued or running. */
  staleMs: number;
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/**
 * Ends runs that nobody will end: still queued or running in MySQL, but with no live job (the
 * gateway died between writing the run and queueing it, the job failed or passed its stall
 * limit, the worker died holding the final write). Each gets `error{run_lost}` + `done`, or, if
 * its done is already in the log, the final status that done says. One worker sweeps at a time.
 */
export class RunReaper {
  constructor(private readonly deps: RunReaperDeps) {}

  /** One sweep, if no other worker is sweeping. @returns how many runs it ended. */
  async sweep(): Promise<number> {
    const { redis, store, staleMs } = this.deps;
    const token = randomUUID();
    const lock = 'da:reaper:lock';
    if ((await redis.set(lock, token, 'PX', Math.max(staleMs, 5_000), 'NX')) !== 'OK') return 0;
    try {
      let ended = 0;
      for (const run of await store.runs.listStale(new Date(Date.now() - staleMs), 100)) {
        if (await this.reap(run)) ended++;
      }
      return ended;
    } finally {
      await redis.eval(RELEASE, 1, lock, token).catch(() => undefined);
    }
  }

  private async reap(run: RunRecord): Promise<boolean> {
    const { store, log, ledger, queue, logger } = this.deps;
    const state = await queue.jobState(run.runId);
    if (ALIVE.has(state)) return false;
    const envelope = { sessionId: run.sessionId, runId: run.runId };
    if (await log.isSealed(run.runId)) {
      // Its done went out but the final write did not land: the log says how it ended.
      const events = await log.range(run.runId, 0);
      const done = events.findLast((e: EventDict) => e.event_type === 'done');
      // A busy LLM's error is recoverable for the client (send it again later), yet the run failed:
      // only a worker's hand-over is no failure.
      const failed = events.some((e) => e.event_type === 'error' && e.error_code !== 'worker_lost');
      const status = done?.cancelled ? 'cancelled' : failed ? 'failed' : 'completed';
      const marked = await store.runs.markFinished(run.runId, status, failed ? 'ended before its final write' : undefined);
      await this.releaseSlot(run);
      return marked;
    }
    const epoch = await ledger.claim(run.runId);
    const ended = await log.append(new ErrorEvent(envelope, 'This turn stopped without finishing and was ended; send it again', false, 'run_lost').toDict(), epoch);
    if (ended.status === 'fenced') return false;
    await log.append(new DoneEvent(envelope, false).toDict(), epoch);
    // No worker archives this run's end: archive its log here.
    await store.events.appendBatch(run.runId, await log.range(run.runId, 0));
    const marked = await store.runs.markFinished(run.runId, 'failed', `no worker holds it (job ${state})`);
    logger.warn({ run_id: run.runId, job_state: state }, 'ended a run nobody held');
    await this.releaseSlot(run);
    return marked;
  }

  /** Its tenant's concurrent-run slot (gateways would prune it later anyway). */
  private async releaseSlot(run: RunRecord): Promise<void> {
    await new TenantRunSlots(this.deps.redis).release(run.tenantId, run.runId).catch(() => undefined);
  }
}
