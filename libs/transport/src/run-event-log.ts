import type { Redis } from 'ioredis';
import type { EventDict } from '#core/events/execution-event.js';
import { redisKeys } from './redis-keys.js';

/**
 * Appends an event: next seq, append to the run's log, publish to the session's channel,
 * in one round trip. Once a `done` is appended the run is sealed and later appends are
 * dropped (return 0), so a run has exactly one done and nothing after it. Once the run's
 * cancel record exists only its `done` is accepted (return -1), so the worker holding it
 * learns of a cancel at its next step even if the control message was lost. An append that
 * carries an owner epoch is refused (return -2) once another worker has taken the run over.
 */
const APPEND_SCRIPT = `
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
if ARGV[6] ~= '' and redis.call('GET', KEYS[5]) ~= ARGV[6] then return -2 end
if ARGV[4] ~= '1' and redis.call('EXISTS', KEYS[4]) == 1 then return -1 end
local seq = redis.call('INCR', KEYS[1])
local event = '{"seq":' .. seq .. ',' .. ARGV[2]
redis.call('RPUSH', KEYS[2], event)
if ARGV[4] == '1' then
  redis.call('SET', KEYS[3], seq, 'EX', ARGV[3])
  redis.call('EXPIRE', KEYS[1], ARGV[3])
  redis.call('EXPIRE', KEYS[2], ARGV[3])
  for i = 5, 7 do redis.call('EXPIRE', KEYS[i], ARGV[3]) end
elseif seq == 1 then
  redis.call('EXPIRE', KEYS[1], ARGV[5])
  redis.call('EXPIRE', KEYS[2], ARGV[5])
end
redis.call('PUBLISH', ARGV[1], event)
return seq
`;

type AppendCommand = (
  seqKey: string,
  logKey: string,
  doneKey: string,
  cancelKey: string,
  ownerKey: string,
  stepsKey: string,
  callsKey: string,
  channel: string,
  body: string,
  ttl: number,
  terminal: '0' | '1',
  activeTtl: number,
  epoch: string,
) => Promise<number>;

export interface RunEventLogOptions {
  /** Seconds a finished run's log stays in Redis. */
  retentionSeconds: number;
  /** Upper bound on an unfinished run's log lifetime (a run whose worker vanished). */
  activeRetentionSeconds?: number;
}

export type AppendResult = { status: 'appended'; event: EventDict } | { status: 'sealed' } | { status: 'cancelled' } | { status: 'fenced' };

/** The per-run event log in Redis: a list indexed by seq - 1, plus a live channel per session. */
export class RunEventLog {
  constructor(private readonly redis: Redis, private readonly options: RunEventLogOptions) {
    if (!(redis as unknown as { runEventAppend?: unknown }).runEventAppend) {
      redis.defineCommand('runEventAppend', { numberOfKeys: 7, lua: APPEND_SCRIPT });
    }
  }

  /**
   * Appends an event (its `seq` is ignored and assigned here).
   * @param epoch the appending worker's ownership of the run (RunLedger.claim); absent: unchecked.
   * @returns the event with its seq; `sealed` when the run already has its done;
   *   `cancelled` when the run was cancelled (only a done is accepted then); `fenced` when
   *   another worker owns the run now.
   */
  async append(event: EventDict, epoch?: number): Promise<AppendResult> {
    const { seq: _ignored, ...rest } = event;
    const body = JSON.stringify(rest).slice(1);
    const append = (this.redis as unknown as { runEventAppend: AppendCommand }).runEventAppend.bind(this.redis);
    const seq = await append(
      redisKeys.runSeq(event.run_id),
      redisKeys.runLog(event.run_id),
      redisKeys.runDone(event.run_id),
      redisKeys.runCancel(event.run_id),
      redisKeys.runOwner(event.run_id),
      redisKeys.runSteps(event.run_id),
      redisKeys.runCalls(event.run_id),
      redisKeys.sessionChannel(event.session_id),
      body,
      this.options.retentionSeconds,
      event.event_type === 'done' ? '1' : '0',
      this.options.activeRetentionSeconds ?? 24 * 3600,
      epoch === undefined ? '' : String(epoch),
    );
    if (seq === 0) return { status: 'sealed' };
    if (seq === -2) return { status: 'fenced' };
    if (seq === -1) return { status: 'cancelled' };
    return { status: 'appended', event: { ...event, seq } };
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

  async isCancelRequested(runId: string): Promise<boolean> {
    return (await this.redis.exists(redisKeys.runCancel(runId))) === 1;
  }

  /** Events of a run with seq > afterSeq still held in Redis, in order; at most `count` when given. */
  async range(runId: string, afterSeq = 0, count?: number): Promise<EventDict[]> {
    const start = Math.max(0, afterSeq);
    const raw = await this.redis.lrange(redisKeys.runLog(runId), start, count === undefined ? -1 : start + count - 1);
    return raw.map((r) => JSON.parse(r) as EventDict);
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
