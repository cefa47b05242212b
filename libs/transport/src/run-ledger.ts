import type { Redis } from 'ioredis';
import type { JournalStep } from '#core/engine/run-journal.js';
import { redisKeys } from './redis-keys.js';

/** A recorded step and the seq of the last event that went out before it. */
export interface StoredStep extends JournalStep {
  seq: number;
}

/**
 * Pushes a step, or sets an intent, only while the caller's epoch still owns the run.
 * ARGV[1] epoch, ARGV[2] mode ('step' | 'intent'), ARGV[3] payload, ARGV[4] field, ARGV[5] ttl.
 * Returns -1 when another worker owns the run; for an intent, 1 when new and 0 when it existed.
 */
const RECORD_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if ARGV[2] == 'step' then
  redis.call('RPUSH', KEYS[2], ARGV[3])
  redis.call('EXPIRE', KEYS[2], ARGV[5])
  return 1
end
local added = redis.call('HSETNX', KEYS[3], ARGV[4], ARGV[3])
redis.call('EXPIRE', KEYS[3], ARGV[5])
return added
`;

type RecordCommand = (owner: string, steps: string, calls: string, epoch: string, mode: 'step' | 'intent', payload: string, field: string, ttl: number) => Promise<number>;

/** Another worker took the run over: this one must stop. */
export class RunFencedError extends Error {
  constructor(readonly runId: string) {
    super(`run ${runId} is owned by another worker`);
    this.name = 'RunFencedError';
  }
}

/**
 * The once-only ledger of runs in Redis, beside their event log: who owns each run (an epoch
 * every taker raises, checked by every write, so two workers never run one run together), the
 * steps it recorded, and the intents of its side-effecting tool calls. Kept as long as an
 * unfinished run's log; a run's done shortens it to the log's retention.
 */
export class RunLedger {
  constructor(private readonly redis: Redis, private readonly ttlSeconds: number) {
    if (!(redis as unknown as { runLedgerRecord?: unknown }).runLedgerRecord) {
      redis.defineCommand('runLedgerRecord', { numberOfKeys: 3, lua: RECORD_SCRIPT });
    }
  }

  /** Takes ownership of a run. @returns this owner's epoch: 1 on the first attempt, higher on a takeover. */
  async claim(runId: string): Promise<number> {
    const key = redisKeys.runOwner(runId);
    const [[, epoch]] = (await this.redis.multi().incr(key).expire(key, this.ttlSeconds).exec()) as [[null, number], unknown];
    return epoch;
  }

  /** Steps recorded so far, oldest first. */
  async steps(runId: string): Promise<StoredStep[]> {
    return (await this.redis.lrange(redisKeys.runSteps(runId), 0, -1)).map((raw) => JSON.parse(raw) as StoredStep);
  }

  /** @throws RunFencedError when another worker owns the run. */
  async recordStep(runId: string, epoch: number, step: StoredStep): Promise<void> {
    if ((await this.record(runId, epoch, 'step', JSON.stringify(step), '')) === -1) throw new RunFencedError(runId);
  }

  /**
   * Records the intent to run a call. @returns `new`, or `interrupted` when it was recorded
   * before (an earlier attempt started the call and never recorded its result).
   * @throws RunFencedError when another worker owns the run.
   */
  async intend(runId: string, epoch: number, callId: string, argsHash: string, tool: string): Promise<'new' | 'interrupted'> {
    const added = await this.record(runId, epoch, 'intent', JSON.stringify({ tool, at: new Date().toISOString() }), `${callId}:${argsHash}`);
    if (added === -1) throw new RunFencedError(runId);
    return added === 1 ? 'new' : 'interrupted';
  }

  private record(runId: string, epoch: number, mode: 'step' | 'intent', payload: string, field: string): Promise<number> {
    const record = (this.redis as unknown as { runLedgerRecord: RecordCommand }).runLedgerRecord.bind(this.redis);
    return record(redisKeys.runOwner(runId), redisKeys.runSteps(runId), redisKeys.runCalls(runId), String(epoch), mode, payload, field, this.ttlSeconds);
  }
}
