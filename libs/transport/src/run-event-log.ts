import { randomBytes } from 'node:crypto';
import type { AppendResult, RunLog, RunOwner } from '#core/run/run-ports.js';
import calculateSlot from 'cluster-key-slot';
import { rememberEventJson } from '#core/events/event-json.js';
import type { EventDict } from '#core/events/execution-event.js';
import { isCluster, type RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';
import { luaScript } from './lua/lua-scripts.js';

/** A Lua expression for the key `keyOf` gives, built from the Lua variable `id` (so script and TypeScript name keys alike). */
function luaKey(keyOf: (id: string) => string, id: string): string {
  const [before, after] = keyOf('\u0000').split('\u0000');
  return `'${before}' .. ${id} .. '${after}'`;
}

/** Arguments per event in the append script (what {@link RunEventLog.send} pushes for each). */
const ARGS_PER_EVENT = 5;

/**
 * The append script, lua/run-event-append.lua (what it does, its arguments and answers are
 * described there), with what only TypeScript knows filled in: each run key as a Lua
 * expression built from the script's variable `run` (so script and TypeScript name keys alike),
 * the publish command, and the number of arguments per event.
 * @param publish PUBLISH on a single Redis, SPUBLISH on a cluster.
 */
function appendScript(publish: 'PUBLISH' | 'SPUBLISH'): string {
  return luaScript('run-event-append', {
    ARGS_PER_EVENT: String(ARGS_PER_EVENT),
    SEQ_KEY: luaKey(redisKeys.runSeq, 'run'),
    LOG_KEY: luaKey(redisKeys.runLog, 'run'),
    DONE_KEY: luaKey(redisKeys.runDone, 'run'),
    OWNER_KEY: luaKey(redisKeys.runOwner, 'run'),
    APPENDS_KEY: luaKey(redisKeys.runAppends, 'run'),
    CANCEL_KEY: luaKey(redisKeys.runCancel, 'run'),
    STEPS_KEY: luaKey(redisKeys.runSteps, 'run'),
    CALLS_KEY: luaKey(redisKeys.runCalls, 'run'),
    PARKED_KEY: luaKey(redisKeys.runParked, 'run'),
    CHANNEL_KEY: luaKey(redisKeys.runChannel, 'run'),
    PUBLISH: publish,
  });
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
