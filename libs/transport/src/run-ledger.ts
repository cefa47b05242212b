import type { RedisClient } from './redis-connection.js';
import type { EventDict } from '#core/events/execution-event.js';
import { RunFencedError, type ParkedRecord, type RunLedger, type StoredStep, type TakenRun } from '#core/run/run-ports.js';
import { redisKeys } from './redis-keys.js';

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

/**
 * A worker takes a run, in one round trip: nothing when the run has its done (returns {0});
 * otherwise raises the owner epoch and returns {epoch, the run's log, its recorded steps (only
 * on a takeover: a first owner has none), the wait it was parked on (consumed: '' when none),
 * 1 when its cancel is recorded}. KEYS: done, owner, log, steps, parked, cancel; ARGV[1] ttl.
 */
const TAKE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return {0} end
local epoch = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[1])
local steps = {}
if epoch > 1 then steps = redis.call('LRANGE', KEYS[4], 0, -1) end
local parked = redis.call('GET', KEYS[5]) or ''
redis.call('DEL', KEYS[5])
return {epoch, redis.call('LRANGE', KEYS[3], 0, -1), steps, parked, redis.call('EXISTS', KEYS[6])}
`;

/** Records a parked run's wait while the caller's epoch owns it. KEYS: owner, parked; ARGV: epoch, wait, ttl. Returns -1 when fenced. */
const PARK_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
return 1
`;

type TakeCommand = (done: string, owner: string, log: string, steps: string, parked: string, cancel: string, ttl: number) => Promise<[number, string[]?, string[]?, string?, number?]>;
type ParkCommand = (owner: string, parked: string, epoch: string, wait: string, ttl: number) => Promise<number>;

type RecordCommand = (owner: string, steps: string, calls: string, epoch: string, mode: 'step' | 'intent', payload: string, field: string, ttl: number) => Promise<number>;

/**
 * The once-only ledger of runs in Redis, beside their event log: who owns each run (an epoch
 * every taker raises, checked by every write, so two workers never run one run together), the
 * steps it recorded, and the intents of its side-effecting tool calls. Kept as long as an
 * unfinished run's log; a run's done shortens it to the log's retention.
 */
export class RedisRunLedger implements RunLedger {
  constructor(private readonly redis: RedisClient, private readonly ttlSeconds: number) {
    if (!(redis as unknown as { runLedgerRecord?: unknown }).runLedgerRecord) {
      redis.defineCommand('runLedgerRecord', { numberOfKeys: 3, lua: RECORD_SCRIPT });
    }
    if (!(redis as unknown as { runLedgerTake?: unknown }).runLedgerTake) {
      redis.defineCommand('runLedgerTake', { numberOfKeys: 6, lua: TAKE_SCRIPT });
    }
    if (!(redis as unknown as { runLedgerPark?: unknown }).runLedgerPark) {
      redis.defineCommand('runLedgerPark', { numberOfKeys: 2, lua: PARK_SCRIPT });
    }
  }

  /** Takes ownership of a run. @returns this owner's epoch: 1 on the first attempt, higher on a takeover. */
  async claim(runId: string): Promise<number> {
    const key = redisKeys.runOwner(runId);
    const [[, epoch]] = (await this.redis.multi().incr(key).expire(key, this.ttlSeconds).exec()) as [[null, number], unknown];
    return epoch;
  }

  /**
   * Takes a run to run it, in one round trip: what {@link claim} does, unless the run has its
   * done, plus the run's log and (on a takeover) its recorded steps.
   */
  async take(runId: string): Promise<TakenRun> {
    const take = (this.redis as unknown as { runLedgerTake: TakeCommand }).runLedgerTake.bind(this.redis);
    const [epoch, events = [], steps = [], parked = '', cancelled = 0] = await take(
      redisKeys.runDone(runId),
      redisKeys.runOwner(runId),
      redisKeys.runLog(runId),
      redisKeys.runSteps(runId),
      redisKeys.runParked(runId),
      redisKeys.runCancel(runId),
      this.ttlSeconds,
    );
    if (epoch === 0) return { sealed: true };
    return {
      sealed: false,
      epoch,
      events: events.map((raw) => JSON.parse(raw) as EventDict),
      steps: steps.map((raw) => JSON.parse(raw) as StoredStep),
      ...(parked ? { parked: JSON.parse(parked) as ParkedRecord } : {}),
      cancelled: cancelled === 1,
    };
  }

  /**
   * Records the wait a run parks on, so the worker that takes it next continues it quietly.
   * @throws RunFencedError when another worker owns the run.
   */
  async park(runId: string, epoch: number, parked: ParkedRecord): Promise<void> {
    const park = (this.redis as unknown as { runLedgerPark: ParkCommand }).runLedgerPark.bind(this.redis);
    if ((await park(redisKeys.runOwner(runId), redisKeys.runParked(runId), String(epoch), JSON.stringify(parked), this.ttlSeconds)) === -1) throw new RunFencedError(runId);
  }

  /** The wait a parked run is on, without taking it (null when it is not parked). */
  async parkedOf(runId: string): Promise<ParkedRecord | null> {
    const raw = await this.redis.get(redisKeys.runParked(runId));
    return raw ? (JSON.parse(raw) as ParkedRecord) : null;
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
