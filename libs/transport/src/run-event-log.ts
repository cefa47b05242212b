import { randomBytes } from 'node:crypto';
import type { AppendResult, RunLog, RunOwner } from '#core/run/run-ports.js';
import calculateSlot from 'cluster-key-slot';
import { rememberEventJson } from '#core/events/event-json.js';
import type { EventDict } from '#core/events/execution-event.js';
import { isCluster, type RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';

/** A Lua expression for the key `keyOf` gives, built from the Lua variable `id` (so script and TypeScript name keys alike). */
function luaKey(keyOf: (id: string) => string, id: string): string {
  const [before, after] = keyOf('\u0000').split('\u0000');
  return `'${before}' .. ${id} .. '${after}'`;
}

/** Arguments per event in the append script. */
const ARGS_PER_EVENT = 5;

/**
 * The append script: appends events, each as one step: next seq, append to the run's log,
 * publish on the run's channel. Once a `done` is appended the run is sealed and later appends
 * are dropped (0), so a run has exactly one done and nothing after it. Once the run's cancel
 * record exists only its `done` is accepted (-1), so the worker holding it learns of a cancel at
 * its next step even if the control message was lost. An append that carries an owner epoch is
 * refused (-2) once another worker has taken the run over.
 *
 * Each append carries an id of its own, kept with the seq it got: a call sent again after its
 * answer was lost (a failover: ioredis resends what a dead master never answered, which may have
 * run and reached the replica) finds its events appended and answers their seqs again, instead
 * of appending them twice.
 *
 * One call carries the appends a process made in one turn of its event loop, for all its runs
 * (on a single Redis) or for the runs of one slot (on a cluster: the keys and the sharded
 * channel of one call then live on one master). KEYS[1] names a key of the call's first run,
 * only so a cluster routes the call to its slot. ARGV[1] and ARGV[2] are the finished and the
 * active retention, then five arguments per event: run id, the event's JSON after its opening
 * brace, '1' for a done, '2' for an event that closes a cancelled run before its done (accepted
 * after the cancel record), else '0', the epoch or '', and the append's id. Returns each event's seq or refusal,
 * in order. The script names each run's keys itself from its id instead of taking them as KEYS:
 * eight keys per event were two thirds of the bytes a worker wrote to Redis.
 * @param publish PUBLISH on a single Redis, SPUBLISH on a cluster.
 */
function appendScript(publish: 'PUBLISH' | 'SPUBLISH'): string {
  return `
local out = {}
for i = 0, (#ARGV - 2) / ${ARGS_PER_EVENT} - 1 do
  local a = 2 + i * ${ARGS_PER_EVENT}
  local run, body, terminal, epoch, id = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5]
  local seqKey, logKey, doneKey = ${luaKey(redisKeys.runSeq, 'run')}, ${luaKey(redisKeys.runLog, 'run')}, ${luaKey(redisKeys.runDone, 'run')}
  local ownerKey, appendsKey = ${luaKey(redisKeys.runOwner, 'run')}, ${luaKey(redisKeys.runAppends, 'run')}
  local result
  local earlier = redis.call('HGET', appendsKey, id)
  if earlier then
    result = tonumber(earlier)
  elseif redis.call('EXISTS', doneKey) == 1 then
    result = 0
  elseif epoch ~= '' and redis.call('GET', ownerKey) ~= epoch then
    result = -2
  elseif terminal == '0' and redis.call('EXISTS', ${luaKey(redisKeys.runCancel, 'run')}) == 1 then
    result = -1
  else
    local seq = redis.call('INCR', seqKey)
    local event = '{"seq":' .. seq .. ',' .. body
    redis.call('RPUSH', logKey, event)
    redis.call('HSET', appendsKey, id, seq)
    if terminal == '1' then
      redis.call('SET', doneKey, seq, 'EX', ARGV[1])
      for _, key in ipairs({seqKey, logKey, ownerKey, appendsKey, ${luaKey(redisKeys.runSteps, 'run')}, ${luaKey(redisKeys.runCalls, 'run')}, ${luaKey(redisKeys.runParked, 'run')}}) do
        redis.call('EXPIRE', key, ARGV[1])
      end
    elseif seq == 1 then
      redis.call('EXPIRE', seqKey, ARGV[2])
      redis.call('EXPIRE', logKey, ARGV[2])
      redis.call('EXPIRE', appendsKey, ARGV[2])
    end
    redis.call('${publish}', ${luaKey(redisKeys.runChannel, 'run')}, event)
    result = seq
  end
  out[i + 1] = result
end
return out
`;
}

/** Events in one script call at most: a turn with more sends several calls, in order. */
const MAX_BATCH = 256;

type AppendCommand = (routingKey: string, ...args: string[]) => Promise<number[]>;

interface PendingAppend {
  event: EventDict;
  body: string;
  epoch: string;
  /** '1' a done, '2' an event that closes a cancelled run, '0' any other. */
  kind: string;
  /** This append's own id, so that the same call sent twice appends once. */
  id: string;
  resolve: (result: AppendResult) => void;
  reject: (err: unknown) => void;
}

export interface RunEventLogOptions {
  /** Seconds a finished run's log stays in Redis. */
  retentionSeconds: number;
  /** Upper bound on an unfinished run's log lifetime (a run whose worker vanished). */
  activeRetentionSeconds?: number;
}

/** The per-run event log in Redis: a list indexed by seq - 1, a live channel per run, and each session's active runs. */
export class RunEventLog implements RunLog {
  /** Appends made since the last flush, sent together once this turn of the event loop ends. */
  private pending: PendingAppend[] = [];

  private readonly cluster: boolean;
  /** Prefixes this log's append ids (with a count), so no two processes' ids meet. */
  private readonly origin = `${randomBytes(6).toString('base64url')}:`;
  private appended = 0;

  constructor(private readonly redis: RedisClient, private readonly options: RunEventLogOptions) {
    this.cluster = isCluster(redis);
    if (!(redis as unknown as { runEventAppend?: unknown }).runEventAppend) {
      redis.defineCommand('runEventAppend', { numberOfKeys: 1, lua: appendScript(this.cluster ? 'SPUBLISH' : 'PUBLISH') });
    }
  }

  /**
   * Appends an event (its `seq` is ignored and assigned here). Appends made in the same turn of
   * the event loop, by any run, travel to Redis together in one script call, in the order made.
   * @param epoch the appending worker's ownership of the run (RunLedger.claim); absent: unchecked.
   * @param closing an event that closes a cancelled run before its done (the cancelled call of a
   *   parked run): accepted after the cancel record, as a done is.
   * @returns the event with its seq; `sealed` when the run already has its done;
   *   `cancelled` when the run was cancelled (only a done is accepted then); `fenced` when
   *   another worker owns the run now.
   * @throws what Redis answered the whole call with (e.g. the connection is down).
   */
  append(event: EventDict, epoch?: number, closing = false): Promise<AppendResult> {
    const { seq: _ignored, ...rest } = event;
    const body = JSON.stringify(rest).slice(1);
    return new Promise((resolve, reject) => {
      const kind = event.event_type === 'done' ? '1' : closing ? '2' : '0';
      this.pending.push({ event, body, epoch: epoch === undefined ? '' : String(epoch), kind, id: `${this.origin}${(++this.appended).toString(36)}`, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const pending = this.pending;
    this.pending = [];
    for (const group of this.cluster ? bySlot(pending) : [pending]) {
      for (let i = 0; i < group.length; i += MAX_BATCH) this.send(group.slice(i, i + MAX_BATCH));
    }
  }

  private send(batch: PendingAppend[]): void {
    const args: string[] = [String(this.options.retentionSeconds), String(this.options.activeRetentionSeconds ?? 24 * 3600)];
    for (const { event, body, epoch, kind, id } of batch) args.push(event.run_id, body, kind, epoch, id);
    const append = (this.redis as unknown as { runEventAppend: AppendCommand }).runEventAppend.bind(this.redis);
    append(redisKeys.runSeq(batch[0]!.event.run_id), ...args).then(
      (results) =>
        batch.forEach((p, i) => {
          const result = outcome(p.event, results[i]!, p.body);
          if (result.status !== 'appended' || p.kind !== '1') return p.resolve(result);
          // A done takes the run off its session's active runs: a key of the session's slot, so
          // not in the script. The done's append resolves once it is off (or Redis failed it: the
          // next cancel of the session finds the run sealed and takes it off then).
          void this.forgetActive(p.event.session_id, p.event.run_id)
            .catch(() => undefined)
            .then(() => p.resolve(result));
        }),
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
    // Two commands sent together, which Redis runs in order (a MULTI would cost a pipeline object per run).
    await Promise.all([this.redis.hset(key, runId, JSON.stringify([owner.tenantId, owner.userId])), this.redis.expire(key, this.options.activeRetentionSeconds ?? 24 * 3600)]);
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

/** Appends grouped by the slot of their run, each group in the order made. */
function bySlot(pending: PendingAppend[]): PendingAppend[][] {
  const groups = new Map<number, PendingAppend[]>();
  for (const p of pending) {
    const slot = calculateSlot(redisKeys.runSeq(p.event.run_id));
    const group = groups.get(slot);
    if (group) group.push(p);
    else groups.set(slot, [p]);
  }
  return [...groups.values()];
}

function outcome(event: EventDict, seq: number, body: string): AppendResult {
  if (seq === 0) return { status: 'sealed' };
  if (seq === -2) return { status: 'fenced' };
  if (seq === -1) return { status: 'cancelled' };
  const appended = { ...event, seq };
  // The text the script built and published: the archive writes it as it is.
  rememberEventJson(appended, `{"seq":${seq},${body}`);
  return { status: 'appended', event: appended };
}
