import type { Redis } from 'ioredis';
import type { EventDict } from '#core/events/execution-event.js';
import { redisKeys } from './redis-keys.js';

/**
 * Appends events, each as one step: next seq, append to the run's log, publish to the session's
 * channel. Once a `done` is appended the run is sealed and later appends are dropped (0), so a
 * run has exactly one done and nothing after it. Once the run's cancel record exists only its
 * `done` is accepted (-1), so the worker holding it learns of a cancel at its next step even if
 * the control message was lost. An append that carries an owner epoch is refused (-2) once
 * another worker has taken the run over.
 *
 * A done also takes the run off its session's active runs.
 *
 * One call carries every append a process made in one turn of its event loop, for all its runs:
 * eight keys per event (KEYS[8i+1..8i+8]: seq, log, done, cancel, owner, steps, calls, the
 * session's active runs), ARGV[1] and ARGV[2] the finished and the active retention, then five
 * arguments per event (channel, the event's JSON after its opening brace, '1' for a done, the
 * epoch or '', the run id). Returns each event's seq or refusal, in order.
 */
const APPEND_SCRIPT = `
local out = {}
for i = 0, #KEYS / 8 - 1 do
  local k = i * 8
  local a = 2 + i * 5
  local terminal = ARGV[a + 3]
  local epoch = ARGV[a + 4]
  local result
  if redis.call('EXISTS', KEYS[k + 3]) == 1 then
    result = 0
  elseif epoch ~= '' and redis.call('GET', KEYS[k + 5]) ~= epoch then
    result = -2
  elseif terminal ~= '1' and redis.call('EXISTS', KEYS[k + 4]) == 1 then
    result = -1
  else
    local seq = redis.call('INCR', KEYS[k + 1])
    local event = '{"seq":' .. seq .. ',' .. ARGV[a + 2]
    redis.call('RPUSH', KEYS[k + 2], event)
    if terminal == '1' then
      redis.call('SET', KEYS[k + 3], seq, 'EX', ARGV[1])
      for j = 1, 2 do redis.call('EXPIRE', KEYS[k + j], ARGV[1]) end
      for j = 5, 7 do redis.call('EXPIRE', KEYS[k + j], ARGV[1]) end
      redis.call('HDEL', KEYS[k + 8], ARGV[a + 5])
    elseif seq == 1 then
      redis.call('EXPIRE', KEYS[k + 1], ARGV[2])
      redis.call('EXPIRE', KEYS[k + 2], ARGV[2])
    end
    redis.call('PUBLISH', ARGV[a + 1], event)
    result = seq
  end
  out[i + 1] = result
end
return out
`;

/** Keys per event in {@link APPEND_SCRIPT}. */
const KEYS_PER_EVENT = 8;
/** Events in one script call at most: a turn with more sends several calls, in order. */
const MAX_BATCH = 256;

type AppendCommand = (numberOfKeys: number, ...keysThenArgs: string[]) => Promise<number[]>;

interface PendingAppend {
  event: EventDict;
  body: string;
  epoch: string;
  resolve: (result: AppendResult) => void;
  reject: (err: unknown) => void;
}

/** Who started a run. */
export interface RunOwner {
  tenantId: string;
  userId: string;
}

export interface RunEventLogOptions {
  /** Seconds a finished run's log stays in Redis. */
  retentionSeconds: number;
  /** Upper bound on an unfinished run's log lifetime (a run whose worker vanished). */
  activeRetentionSeconds?: number;
}

export type AppendResult = { status: 'appended'; event: EventDict } | { status: 'sealed' } | { status: 'cancelled' } | { status: 'fenced' };

/** The per-run event log in Redis: a list indexed by seq - 1, plus a live channel per session. */
export class RunEventLog {
  /** Appends made since the last flush, sent together once this turn of the event loop ends. */
  private pending: PendingAppend[] = [];

  constructor(private readonly redis: Redis, private readonly options: RunEventLogOptions) {
    if (!(redis as unknown as { runEventAppend?: unknown }).runEventAppend) {
      redis.defineCommand('runEventAppend', { lua: APPEND_SCRIPT });
    }
  }

  /**
   * Appends an event (its `seq` is ignored and assigned here). Appends made in the same turn of
   * the event loop, by any run, travel to Redis together in one script call, in the order made.
   * @param epoch the appending worker's ownership of the run (RunLedger.claim); absent: unchecked.
   * @returns the event with its seq; `sealed` when the run already has its done;
   *   `cancelled` when the run was cancelled (only a done is accepted then); `fenced` when
   *   another worker owns the run now.
   * @throws what Redis answered the whole call with (e.g. the connection is down).
   */
  append(event: EventDict, epoch?: number): Promise<AppendResult> {
    const { seq: _ignored, ...rest } = event;
    const body = JSON.stringify(rest).slice(1);
    return new Promise((resolve, reject) => {
      this.pending.push({ event, body, epoch: epoch === undefined ? '' : String(epoch), resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const pending = this.pending;
    this.pending = [];
    for (let i = 0; i < pending.length; i += MAX_BATCH) this.send(pending.slice(i, i + MAX_BATCH));
  }

  private send(batch: PendingAppend[]): void {
    const keys: string[] = [];
    const args: string[] = [String(this.options.retentionSeconds), String(this.options.activeRetentionSeconds ?? 24 * 3600)];
    for (const { event, body, epoch } of batch) {
      const run = event.run_id;
      keys.push(redisKeys.runSeq(run), redisKeys.runLog(run), redisKeys.runDone(run), redisKeys.runCancel(run), redisKeys.runOwner(run), redisKeys.runSteps(run), redisKeys.runCalls(run), redisKeys.sessionActiveRuns(event.session_id));
      args.push(redisKeys.sessionChannel(event.session_id), body, event.event_type === 'done' ? '1' : '0', epoch, run);
    }
    const append = (this.redis as unknown as { runEventAppend: AppendCommand }).runEventAppend.bind(this.redis);
    append(batch.length * KEYS_PER_EVENT, ...keys, ...args).then(
      (results) => batch.forEach((p, i) => p.resolve(outcome(p.event, results[i]))),
      (err: unknown) => batch.forEach((p) => p.reject(err)),
    );
  }

  /**
   * Records a cancel for a run (kept for the log's retention). Returns false when the run
   * already has its done.
   */
  async requestCancel(runId: string): Promise<boolean> {
    const [[, , ], [, sealed]] = (await this.redis
      .multi()
      .set(redisKeys.runCancel(runId), '1', 'EX', this.options.activeRetentionSeconds ?? 24 * 3600)
      .exists(redisKeys.runDone(runId))
      .exec()) as [[null, unknown], [null, number]];
    return sealed === 0;
  }

  /**
   * Adds a run to its session's active runs, with its owner; its done takes it off again. Kept
   * as long as an unfinished run's log.
   */
  async markActive(sessionId: string, runId: string, owner: RunOwner): Promise<void> {
    const key = redisKeys.sessionActiveRuns(sessionId);
    await this.redis.multi().hset(key, runId, JSON.stringify([owner.tenantId, owner.userId])).expire(key, this.options.activeRetentionSeconds ?? 24 * 3600).exec();
  }

  /** The session's runs that have no done yet, as {@link markActive} recorded them (none when Redis lost them). */
  async activeRuns(sessionId: string): Promise<Array<{ runId: string } & RunOwner>> {
    const all = await this.redis.hgetall(redisKeys.sessionActiveRuns(sessionId));
    return Object.entries(all).map(([runId, owner]) => {
      const [tenantId, userId] = JSON.parse(owner) as [string, string];
      return { runId, tenantId, userId };
    });
  }

  /** Takes a run off its session's active runs (one that ended without a done in this log, e.g. its log expired). */
  async forgetActive(sessionId: string, runId: string): Promise<void> {
    await this.redis.hdel(redisKeys.sessionActiveRuns(sessionId), runId);
  }

  async isCancelRequested(runId: string): Promise<boolean> {
    return (await this.redis.exists(redisKeys.runCancel(runId))) === 1;
  }

  /** Events of a run with seq > afterSeq still held in Redis, in order; at most `count` when given. */
  async range(runId: string, afterSeq = 0, count?: number): Promise<EventDict[]> {
    return (await this.rangeRaw(runId, afterSeq, count)).map((r) => JSON.parse(r) as EventDict);
  }

  /** As {@link range}, each event as the JSON text it was published as (what a relay forwards unchanged). */
  rangeRaw(runId: string, afterSeq = 0, count?: number): Promise<string[]> {
    const start = Math.max(0, afterSeq);
    return this.redis.lrange(redisKeys.runLog(runId), start, count === undefined ? -1 : start + count - 1);
  }

  /** Highest seq assigned so far (0 when none or expired). */
  async lastSeq(runId: string): Promise<number> {
    return Number((await this.redis.get(redisKeys.runSeq(runId))) ?? 0);
  }

  /** Whether the run's done has been appended (and is still retained). */
  async isSealed(runId: string): Promise<boolean> {
    return (await this.redis.exists(redisKeys.runDone(runId))) === 1;
  }
}

function outcome(event: EventDict, seq: number): AppendResult {
  if (seq === 0) return { status: 'sealed' };
  if (seq === -2) return { status: 'fenced' };
  if (seq === -1) return { status: 'cancelled' };
  return { status: 'appended', event: { ...event, seq } };
}
