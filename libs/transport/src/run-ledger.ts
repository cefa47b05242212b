import type { RedisClient } from './redis-connection.js';
import type { EventDict } from '#core/events/execution-event.js';
import { RunFencedError, type ParkedRecord, type RunLedger, type StoredStep, type TakenRun } from '#core/run/run-ports.js';
import { redisKeys } from './redis-keys.js';
import { luaScript } from './lua/lua-scripts.js';


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
      redis.defineCommand('runLedgerRecord', { numberOfKeys: 3, lua: luaScript('run-ledger-record') });
    }
    if (!(redis as unknown as { runLedgerTake?: unknown }).runLedgerTake) {
      redis.defineCommand('runLedgerTake', { numberOfKeys: 6, lua: luaScript('run-ledger-take') });
    }
    if (!(redis as unknown as { runLedgerPark?: unknown }).runLedgerPark) {
      redis.defineCommand('runLedgerPark', { numberOfKeys: 2, lua: luaScript('run-ledger-park') });
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
