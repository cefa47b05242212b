import type { DueParkedRun, ParkedRunDeadlines } from './parked-run-deadlines.js';
import type { ExpireOutcome, RunLifecycle } from '#core/run/run-lifecycle.js';

/** How often each gateway and worker looks for parked runs whose question expired: a run ends at most about this long after its deadline. */
export const PARKED_EXPIRY_INTERVAL_MS = 1_000;

/** Runs of one sweep ended side by side: a hundred deadlines that pass together end within a few round trips of each other. */
const PARALLEL = 16;
/** Runs one sweep takes at most; the rest wait for the next one. */
const PER_SWEEP = 500;
/** The sweep lease: long enough for one sweep, short enough that a process that dies holding it delays the next by little. */
const LEASE_MS = 10_000;

export interface ParkedRunExpiryDeps {
  deadlines: ParkedRunDeadlines;
  /** Ends each expired run (the only writer of a run's end). */
  lifecycle: Pick<RunLifecycle, 'expire'>;
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/**
 * Ends parked runs whose question nobody answered by its deadline. A parked run holds no worker,
 * so nothing in a worker waits for its deadline: every gateway and worker runs this sweep, one
 * at a time (a Redis lease), and the run ends on time whether workers are up or all of them are
 * down, giving back its tenant slot.
 */
export class ParkedRunExpiry {
  private timer?: NodeJS.Timeout;
  private sweeping = false;

  constructor(private readonly deps: ParkedRunExpiryDeps) {}

  /** Sweeps every `intervalMs` until {@link stop}. */
  start(intervalMs = PARKED_EXPIRY_INTERVAL_MS): void {
    this.timer = setInterval(() => {
      if (this.sweeping) return;
      this.sweeping = true;
      this.sweep()
        .catch((err: unknown) => this.deps.logger.warn({ err }, 'parked run expiry sweep failed'))
        .finally(() => (this.sweeping = false));
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One sweep, if no other process is sweeping. @returns how many runs it ended. */
  async sweep(): Promise<number> {
    const { deadlines } = this.deps;
    const release = await deadlines.lease(LEASE_MS);
    if (!release) return 0;
    try {
      const due = await deadlines.due(PER_SWEEP);
      let ended = 0;
      for (let i = 0; i < due.length; i += PARALLEL) {
        const outcomes = await Promise.all(due.slice(i, i + PARALLEL).map((entry) => this.expire(entry)));
        ended += outcomes.filter((o) => o === 'ended').length;
      }
      return ended;
    } finally {
      await release().catch(() => undefined);
    }
  }

  /**
   * Expires one run; its entry goes once the run is dealt with. An error, or a job a worker
   * holds (it may be a run still parking, whose job is not delayed yet), leaves the entry for the
   * next sweep, which finds the run parked and ends it, or taken and no longer parked.
   */
  private async expire(entry: DueParkedRun): Promise<ExpireOutcome | null> {
    const { deadlines, lifecycle, logger } = this.deps;
    try {
      const outcome = await lifecycle.expire(entry.run);
      if (outcome !== 'running') await deadlines.forget(entry);
      if (outcome === 'ended') logger.info({ run_id: entry.run.runId, deadline: new Date(entry.deadline).toISOString() }, 'parked run expired unanswered');
      return outcome;
    } catch (err) {
      logger.warn({ run_id: entry.run.runId, err }, 'could not expire a parked run; the next sweep tries again');
      return null;
    }
  }
}
