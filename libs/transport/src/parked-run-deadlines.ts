import type { RedisClient } from './redis-connection.js';
import type { ParkedDeadlines } from '#core/run/run-ports.js';
import { redisKeys } from './redis-keys.js';
import { takeLease } from './redis-lease.js';
import { luaScript } from './lua/lua-scripts.js';

/** A parked run as its deadline entry names it: enough to end it without reading its row. */
export interface ParkedRunRef {
  runId: string;
  sessionId: string;
  tenantId: string;
}

type DueCommand = (key: string, limit: number) => Promise<string[]>;
type ForgetCommand = (key: string, member: string, deadline: number) => Promise<number>;

/** A due entry: the run and the deadline it was entered with. */
export interface DueParkedRun {
  run: ParkedRunRef;
  deadline: number;
}

/**
 * The deadlines of a queue's parked runs' questions, one sorted set shared by every process of
 * that queue (run → `expires_at`, epoch ms). A parked run holds no worker and so no timer: this
 * set is what makes its expiry fire on time, swept by whichever gateway or worker holds the
 * sweep lease, with workers up or all of them down.
 */
export class ParkedRunDeadlines implements ParkedDeadlines {
  private readonly key: string;

  /** @param queueName The run queue (DATAAGENT_QUEUE_NAME) whose parked runs these are. */
  constructor(private readonly redis: RedisClient, private readonly queueName: string) {
    this.key = redisKeys.parkedRunDeadlines(queueName);
    if (!(redis as unknown as { parkedRunsDue?: unknown }).parkedRunsDue) {
      redis.defineCommand('parkedRunsDue', { numberOfKeys: 1, lua: luaScript('parked-runs-due') });
      redis.defineCommand('parkedRunsForget', { numberOfKeys: 1, lua: luaScript('parked-runs-forget') });
    }
  }

  /** Enters (or moves) a parked run's deadline. */
  async add(run: ParkedRunRef, deadline: number): Promise<void> {
    await this.redis.zadd(this.key, deadline, memberOf(run));
  }

  /** Up to `limit` runs whose deadline has passed, by Redis's clock; oldest first. */
  async due(limit: number): Promise<DueParkedRun[]> {
    const due = (this.redis as unknown as { parkedRunsDue: DueCommand }).parkedRunsDue.bind(this.redis);
    const flat = await due(this.key, limit);
    const entries: DueParkedRun[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const run = refOf(flat[i]!);
      if (run) entries.push({ run, deadline: Number(flat[i + 1]) });
    }
    return entries;
  }

  /** Removes a run's entry, unless it was entered again with another deadline since the sweep read it. */
  async forget(entry: DueParkedRun): Promise<void> {
    const forget = (this.redis as unknown as { parkedRunsForget: ForgetCommand }).parkedRunsForget.bind(this.redis);
    await forget(this.key, memberOf(entry.run), entry.deadline);
  }

  /**
   * Takes the sweep lease for `ttlMs` unless another process holds it.
   * @returns its release, or null when another process sweeps now.
   */
  async lease(ttlMs: number): Promise<(() => Promise<void>) | null> {
    const lease = await takeLease(this.redis, redisKeys.parkedRunSweepLease(this.queueName), ttlMs);
    return lease && (() => lease.release());
  }
}

/** The set's member for a run: JSON `[run, session, tenant]`, the same text every time for the same run. */
function memberOf(run: ParkedRunRef): string {
  return JSON.stringify([run.runId, run.sessionId, run.tenantId]);
}

function refOf(member: string): ParkedRunRef | null {
  try {
    const [runId, sessionId, tenantId] = JSON.parse(member) as unknown[];
    return typeof runId === 'string' && typeof sessionId === 'string' && typeof tenantId === 'string' ? { runId, sessionId, tenantId } : null;
  } catch {
    return null;
  }
}
