import { randomUUID } from 'node:crypto';
import type { EventDict, EventType } from '#core/events/execution-event.js';
import { waitUntil } from '#test/support/event-waits.js';
import { harnessRedisUrl } from '#test/support/harness-redis.js';
import { createRedis, type RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';
import { RunEventLog } from './run-event-log.js';
import { RedisRunLedger } from './run-ledger.js';
import { type AppendResult, RunFencedError, RunLedger, type StoredStep } from '#core/run/run-ports.js';

/** The run event log's Lua script against the harness Redis. Every test uses its own runs. */

const CONNECTIONS = 5;
let conns: RedisClient[];
let logs: RunEventLog[];
let subscriber: RedisClient;
/** Raw messages received on each run's channel, in order. */
const received = new Map<string, string[]>();
const sentinels = new Map<string, () => void>();

const id = (kind: string) => `spec-${kind}-${randomUUID()}`;
// Only the fields the log looks at: what an event carries beyond them is the log's to keep, not to check.
const event = (sessionId: string, runId: string, type: EventType, fields: Record<string, unknown> = {}): EventDict =>
  ({
    event_type: type,
    timestamp: '2026-01-01T00:00:00.000Z',
    session_id: sessionId,
    run_id: runId,
    seq: 0,
    ...fields,
  }) as EventDict;
const contentOf = (e: EventDict): string | undefined => (e.event_type === 'text' ? e.content : undefined);
const seqs = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

async function rawLog(runId: string): Promise<string[]> {
  return conns[0].lrange(redisKeys.runLog(runId), 0, -1);
}

/** Starts recording a run's channel. */
async function listen(runId: string): Promise<void> {
  received.set(redisKeys.runChannel(runId), []);
  await subscriber.subscribe(redisKeys.runChannel(runId));
}

/**
 * What the run's channel carried up to now: a marker published after every append has
 * returned arrives after all of their messages.
 */
async function channelUpToNow(runId: string): Promise<string[]> {
  const channel = redisKeys.runChannel(runId);
  const marker = `marker-${randomUUID()}`;
  const seen = new Promise<void>((resolve) => sentinels.set(marker, resolve));
  await conns[0].publish(channel, marker);
  await seen;
  return received.get(channel)!.filter((raw) => !raw.startsWith('marker-'));
}

beforeAll(async () => {
  const url = harnessRedisUrl();
  conns = Array.from({ length: CONNECTIONS }, (_, i) => createRedis(url, `spec-log-${i}`));
  logs = conns.map((c) => new RunEventLog(c, { retentionSeconds: 60 }));
  subscriber = createRedis(url, 'spec-log-sub');
  subscriber.on('message', (channel: string, raw: string) => {
    received.get(channel)?.push(raw);
    sentinels.get(raw)?.();
  });
  // Subscribing before the connection's ready check has run makes ioredis fail that check.
  await Promise.all([...conns, subscriber].map((c) => c.ping()));
});

afterAll(async () => {
  await Promise.all([...conns, subscriber].map((c) => c?.quit()));
});

describe('RunEventLog (Redis)', () => {
  it('assigns gapless seqs under concurrent appends to several runs, and publishes each event once in seq order', async () => {
    const sessions = [id('session'), id('session')];
    // One hot run (20 appenders × 50 events) beside three smaller ones, over two sessions.
    const runs = [
      { runId: id('run'), sessionId: sessions[0], appenders: 20, each: 50 },
      { runId: id('run'), sessionId: sessions[0], appenders: 5, each: 20 },
      { runId: id('run'), sessionId: sessions[1], appenders: 5, each: 20 },
      { runId: id('run'), sessionId: sessions[1], appenders: 5, each: 20 },
    ];
    await Promise.all(runs.map((run) => listen(run.runId)));
    const results = new Map<string, AppendResult[]>(runs.map((r) => [r.runId, []]));
    let next = 0;
    await Promise.all(
      runs.flatMap((run) =>
        Array.from({ length: run.appenders }, async (_, a) => {
          const log = logs[next++ % CONNECTIONS];
          for (let k = 0; k < run.each; k++) {
            results.get(run.runId)!.push(await log.append(event(run.sessionId, run.runId, 'text', { content: `${a}:${k}` })));
          }
        }),
      ),
    );

    const channels = await Promise.all(runs.map((run) => channelUpToNow(run.runId)));
    for (const run of runs) {
      const n = run.appenders * run.each;
      const mine = results.get(run.runId)!;
      expect(mine.every((r) => r.status === 'appended')).toBe(true);
      const assigned = mine.map((r) => (r.status === 'appended' ? r.event.seq : -1)).sort((x, y) => x - y);
      expect(assigned).toEqual(seqs(n));

      const raw = await rawLog(run.runId);
      const stored = raw.map((r) => JSON.parse(r) as EventDict);
      expect(stored.map((e) => e.seq)).toEqual(seqs(n));
      // Each append's returned seq names its own event, and each appender's events keep its order.
      for (const r of mine) if (r.status === 'appended') expect(contentOf(stored[r.event.seq - 1])).toBe(contentOf(r.event));
      for (let a = 0; a < run.appenders; a++) {
        const order = stored.map((e) => contentOf(e) ?? '').filter((content) => content.startsWith(`${a}:`)).map((content) => Number(content.split(':')[1]));
        expect(order).toEqual(Array.from({ length: run.each }, (_, k) => k));
      }
      expect(await logs[0].lastSeq(run.runId)).toBe(n);
      expect(await logs[0].isSealed(run.runId)).toBe(false);

      // The live channel carried exactly the log, once each, in seq order.
      expect(channels[runs.indexOf(run)]).toEqual(raw);
    }
  });

  it('sends the appends of one event-loop turn, for every run, as one script call, each with its own outcome', async () => {
    const sessionId = id('session');
    const runs = Array.from({ length: 100 }, () => id('run'));
    const [sealedRun, cancelledRun] = runs;
    await logs[0].append(event(sessionId, sealedRun, 'done'));
    await logs[0].requestCancel(cancelledRun);
    const scriptCalls = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await conns[0].info('commandstats'))?.[1] ?? 0);
    const before = await scriptCalls();
    // Three events per run, all made in this turn: more than one call's worth (256), so two calls.
    const turn = runs.flatMap((runId) => [0, 1, 2].map((k) => logs[1].append(event(sessionId, runId, 'text', { content: `${k}` }))));
    const results = await Promise.all(turn);
    expect((await scriptCalls()) - before).toBe(2);
    expect(results.slice(0, 3).map((r) => r.status)).toEqual(['sealed', 'sealed', 'sealed']);
    expect(results.slice(3, 6).map((r) => r.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    for (const [i, runId] of runs.entries()) {
      if (i < 2) continue;
      expect(results.slice(i * 3, i * 3 + 3).map((r) => (r.status === 'appended' ? [r.event.seq, contentOf(r.event)] : r.status))).toEqual([[1, '0'], [2, '1'], [3, '2']]);
      expect((await rawLog(runId)).map((raw) => contentOf(JSON.parse(raw) as EventDict))).toEqual(['0', '1', '2']);
    }
  });

  it("keeps a session's runs without a done, with their owners, and its done takes a run off", async () => {
    const sessionId = id('session');
    const [first, second, foreign] = [id('run'), id('run'), id('run')];
    await logs[0].markActive(sessionId, first, { tenantId: 'acme', userId: 'alice/x' });
    await logs[1].markActive(sessionId, second, { tenantId: 'acme', userId: 'alice/x' });
    await logs[2].markActive(sessionId, foreign, { tenantId: 'globex', userId: 'alice/x' });
    const byRun = async () => Object.fromEntries((await logs[3].activeRuns(sessionId)).map((r) => [r.runId, `${r.tenantId}|${r.userId}`]));
    expect(await byRun()).toEqual({ [first]: 'acme|alice/x', [second]: 'acme|alice/x', [foreign]: 'globex|alice/x' });
    await logs[0].append(event(sessionId, first, 'text', { content: 'a' }));
    expect(Object.keys(await byRun()).sort()).toEqual([first, second, foreign].sort());
    await logs[1].append(event(sessionId, first, 'done', { cancelled: false }));
    expect(Object.keys(await byRun()).sort()).toEqual([second, foreign].sort());
    expect(await conns[0].ttl(redisKeys.sessionActiveRuns(sessionId))).toBeGreaterThan(0);
  });

  it('appends a call sent again (its answer lost in a failover) once, and answers the same seqs', async () => {
    const sessionId = id('session');
    const runId = id('run');
    await logs[0].append(event(sessionId, runId, 'text', { content: 'first' }));
    // What ioredis resends after a master died unanswered: the very same script call.
    const args = ['60', '600', runId, '"event_type":"text","content":"twice"}', '0', '', 'spec-append-1', runId, '"event_type":"text","content":"too"}', '0', '', 'spec-append-2'];
    const send = () => (conns[1] as unknown as { runEventAppend: (key: string, ...a: string[]) => Promise<number[]> }).runEventAppend(redisKeys.runSeq(runId), ...args);
    expect(await send()).toEqual([2, 3]);
    expect(await send()).toEqual([2, 3]);
    expect((await rawLog(runId)).map((raw) => (JSON.parse(raw) as EventDict).seq)).toEqual([1, 2, 3]);
    expect(await logs[0].lastSeq(runId)).toBe(3);
  });

  it('accepts exactly one done, even among concurrent ones, and nothing after it', async () => {
    const sessionId = id('session');
    const runId = id('run');
    await listen(runId);
    for (let i = 0; i < 3; i++) await logs[0].append(event(sessionId, runId, 'text', { content: `before ${i}` }));

    const racing = await Promise.all(
      Array.from({ length: 20 }, (_, i) => logs[i % CONNECTIONS].append(event(sessionId, runId, i % 2 ? 'text' : 'done', { content: `racer ${i}` }))),
    );
    const doneWins = racing.filter((r, i) => i % 2 === 0 && r.status === 'appended');
    expect(doneWins).toHaveLength(1);
    expect(racing.filter((_, i) => i % 2 === 0).map((r) => r.status).sort()).toEqual(['appended', ...Array(9).fill('sealed')]);
    const textsIn = racing.filter((r, i) => i % 2 === 1 && r.status === 'appended').length;
    expect(racing.every((r) => r.status === 'appended' || r.status === 'sealed')).toBe(true);

    const raw = await rawLog(runId);
    const stored = raw.map((r) => JSON.parse(r) as EventDict);
    const n = 3 + textsIn + 1;
    expect(stored.map((e) => e.seq)).toEqual(seqs(n));
    expect(stored.filter((e) => e.event_type === 'done')).toEqual([stored.at(-1)]);
    expect(await logs[0].isSealed(runId)).toBe(true);

    // Sealed: later appends, done or not, leave no trace in the log, the seq or the channel.
    expect(await logs[1].append(event(sessionId, runId, 'text', { content: 'late' }))).toEqual({ status: 'sealed' });
    expect(await logs[2].append(event(sessionId, runId, 'done'))).toEqual({ status: 'sealed' });
    expect(await rawLog(runId)).toEqual(raw);
    expect(await logs[0].lastSeq(runId)).toBe(n);
    expect(await channelUpToNow(runId)).toEqual(raw);
  });

  it('after a cancel record accepts only the done, and refuses the cancel once the done is in', async () => {
    const sessionId = id('session');
    const runId = id('run');
    await listen(runId);
    const log = logs[0];
    expect(await log.append(event(sessionId, runId, 'text', { content: 'a' }))).toMatchObject({ status: 'appended', event: { seq: 1 } });
    expect(await log.isCancelRequested(runId)).toBe(false);
    expect(await log.requestCancel(runId)).toBe(true);
    expect(await log.isCancelRequested(runId)).toBe(true);
    expect(await log.append(event(sessionId, runId, 'text', { content: 'late' }))).toEqual({ status: 'cancelled' });
    expect(await log.append(event(sessionId, runId, 'tool_call', { tool_name: 'x' }))).toEqual({ status: 'cancelled' });
    expect(await log.lastSeq(runId)).toBe(1);
    expect(await log.append(event(sessionId, runId, 'done', { cancelled: true }))).toMatchObject({ status: 'appended', event: { seq: 2 } });
    expect(await log.requestCancel(runId)).toBe(false);
    expect(await log.append(event(sessionId, runId, 'text', { content: 'later' }))).toEqual({ status: 'sealed' });

    const raw = await rawLog(runId);
    expect(raw.map((r) => JSON.parse(r) as EventDict).map((e) => [e.seq, e.event_type])).toEqual([
      [1, 'text'],
      [2, 'done'],
    ]);
    expect(await channelUpToNow(runId)).toEqual(raw);
  });

  it('fences appends of a worker whose run was taken over, done included', async () => {
    const sessionId = id('session');
    const runId = id('run');
    const ledger = new RedisRunLedger(conns[0], 600);
    const log = logs[0];
    const first = await ledger.claim(runId);
    expect(await log.append(event(sessionId, runId, 'text', { content: 'first' }), first)).toMatchObject({ status: 'appended', event: { seq: 1 } });
    const second = await ledger.claim(runId);
    expect(second).toBe(first + 1);
    expect(await log.append(event(sessionId, runId, 'text', { content: 'stale' }), first)).toEqual({ status: 'fenced' });
    expect(await log.append(event(sessionId, runId, 'done'), first)).toEqual({ status: 'fenced' });
    expect(await log.append(event(sessionId, runId, 'text', { content: 'second' }), second)).toMatchObject({ status: 'appended', event: { seq: 2 } });
    expect(await log.append(event(sessionId, runId, 'done'), second)).toMatchObject({ status: 'appended', event: { seq: 3 } });
    expect((await log.range(runId)).map((e) => contentOf(e) ?? e.event_type)).toEqual(['first', 'second', 'done']);
  });

  it('takes a run in one call: its epoch, its log, and on a takeover its steps; nothing once it has its done', async () => {
    const sessionId = id('session');
    const runId = id('run');
    const ledger = new RedisRunLedger(conns[1], 600);
    await logs[0].append(event(sessionId, runId, 'run_queued'));
    const first = await ledger.take(runId);
    expect(first).toEqual({ sealed: false, epoch: 1, events: [expect.objectContaining({ seq: 1, event_type: 'run_queued' })], steps: [], cancelled: false });
    await logs[0].append(event(sessionId, runId, 'run_started'), 1);
    await ledger.recordStep(runId, 1, { seq: 2, message: { role: 'user', content: 'hi' } as StoredStep['message'] });
    const second = await ledger.take(runId);
    expect(second.sealed === false && [second.epoch, second.events.map((e) => e.event_type), second.steps.map((st) => st.seq)]).toEqual([2, ['run_queued', 'run_started'], [2]]);
    // The first owner is fenced off.
    expect((await logs[0].append(event(sessionId, runId, 'text'), 1)).status).toBe('fenced');
    await logs[0].append(event(sessionId, runId, 'done'), 2);
    expect(await ledger.take(runId)).toEqual({ sealed: true });
    expect(await conns[0].get(redisKeys.runOwner(runId))).toBe('2');
  });

  it('keeps a parked run’s wait for the next taker alone, fenced by the parking worker’s epoch, with the cancel record', async () => {
    const sessionId = id('session');
    const runId = id('run');
    const ledger = new RedisRunLedger(conns[1], 600);
    await logs[0].append(event(sessionId, runId, 'run_queued'));
    const { epoch } = (await ledger.take(runId)) as { epoch: number };
    const wait = { requestId: 'q', toolCallId: 'c1', until: Date.now() + 1000, seq: 1 };
    await expect(ledger.park(runId, epoch + 1, wait)).rejects.toThrow(RunFencedError);
    await ledger.park(runId, epoch, wait);
    expect(await ledger.parkedOf(runId)).toEqual(wait);
    await logs[0].requestCancel(runId);
    expect(await ledger.take(runId)).toMatchObject({ sealed: false, epoch: epoch + 1, parked: wait, cancelled: true });
    // Taken once: a later taker finds no wait (it was consumed by the worker that continued the run).
    expect(await ledger.take(runId)).not.toHaveProperty('parked');
    // A closing event gets past the cancel record; an ordinary one does not; the done seals it and drops the wait key.
    expect((await logs[0].append(event(sessionId, runId, 'text'))).status).toBe('cancelled');
    expect((await logs[0].append(event(sessionId, runId, 'tool_result'), undefined, true)).status).toBe('appended');
    await ledger.park(runId, epoch + 2, wait);
    await logs[0].append(event(sessionId, runId, 'done'));
    expect(await conns[0].ttl(redisKeys.runParked(runId))).toBeGreaterThan(0);
  });

  it('bounds an unfinished run by the active TTL from its first event, then keeps a finished run for the retention only', async () => {
    const sessionId = id('session');
    const runId = id('run');
    const log = new RunEventLog(conns[0], { retentionSeconds: 1, activeRetentionSeconds: 600 });
    const ledger = new RedisRunLedger(conns[0], 600);
    const epoch = await ledger.claim(runId);
    await ledger.recordStep(runId, epoch, { seq: 1, message: { role: 'user', content: 'hi' } as StoredStep['message'] });
    await ledger.intend(runId, epoch, 'call-1', 'hash', 'http_request');

    await log.append(event(sessionId, runId, 'text', { content: 'a' }), epoch);
    for (const key of [redisKeys.runSeq(runId), redisKeys.runLog(runId)]) {
      expect(await conns[0].ttl(key)).toBeGreaterThanOrEqual(595);
      expect(await conns[0].ttl(key)).toBeLessThanOrEqual(600);
    }
    // Later appends do not extend it: it bounds the run's whole life.
    await conns[0].expire(redisKeys.runLog(runId), 300);
    await log.append(event(sessionId, runId, 'text', { content: 'b' }), epoch);
    expect(await conns[0].ttl(redisKeys.runLog(runId))).toBeLessThanOrEqual(300);

    await log.append(event(sessionId, runId, 'done'), epoch);
    const keys = [redisKeys.runSeq(runId), redisKeys.runLog(runId), redisKeys.runDone(runId), redisKeys.runOwner(runId), redisKeys.runSteps(runId), redisKeys.runCalls(runId)];
    for (const key of keys) {
      const pttl = await conns[0].pttl(key);
      expect([key, pttl > 0 && pttl <= 1_000]).toEqual([key, true]);
    }
    await waitUntil(async () => (await conns[0].exists(...keys)) === 0, 5_000);
    expect(await log.range(runId)).toEqual([]);
    expect(await log.lastSeq(runId)).toBe(0);
    expect(await log.isSealed(runId)).toBe(false);
  });
});

describe('a cancel racing a done (Redis)', () => {
  const RUNS = 200;
  let events: RedisClient;
  let previousNotify: string;
  /** Per run, in Redis's execution order: R a push to its log, D its done record set, C its cancel record set. */
  const trace = new Map<string, string>();
  let onMarker: (() => void) | undefined;

  beforeAll(async () => {
    events = createRedis(harnessRedisUrl(), 'spec-keyevents');
    // Keyspace events are the witness of the order Redis executed the scripts and transactions in.
    previousNotify = ((await conns[0].config('GET', 'notify-keyspace-events')) as string[])[1];
    await conns[0].config('SET', 'notify-keyspace-events', 'E$l');
    events.on('message', (channel: string, key: string) => {
      if (key === 'spec-race-marker') return onMarker?.();
      const m = /^da:run:\{(spec-race-[^}]+)\}:(log|done|cancel)$/.exec(key);
      if (!m) return;
      const token = channel.endsWith(':rpush') ? 'R' : m[2] === 'done' ? 'D' : m[2] === 'cancel' ? 'C' : '';
      trace.set(m[1], (trace.get(m[1]) ?? '') + token);
    });
    await events.ping();
    await events.subscribe('__keyevent@0__:set', '__keyevent@0__:rpush');
  });

  afterAll(async () => {
    await conns[0].config('SET', 'notify-keyspace-events', previousNotify ?? '');
    await events?.quit();
  });

  it('ends every run with exactly one done; the cancel is refused exactly when the done came first; nothing but the done follows a cancel', async () => {
    const sessionId = id('session');
    const runIds = Array.from({ length: RUNS }, () => `spec-race-${randomUUID()}`);
    const pick = () => Math.floor(Math.random() * CONNECTIONS);
    await Promise.all(runIds.map((runId) => logs[0].append(event(sessionId, runId, 'text', { content: 'started' }))));

    type Op = { kind: 'cancel' | 'done' | 'text'; conn: number };
    const outcomes = await Promise.all(
      runIds.map(async (runId) => {
        const ops: Op[] = [{ kind: 'cancel', conn: pick() }, { kind: 'done', conn: pick() }, ...[0, 1, 2].map(() => ({ kind: 'text' as const, conn: pick() }))];
        // Each op starts a random few event-loop turns late, so either may reach Redis first.
        const results = await Promise.all(
          ops.map(async (op) => {
            for (let turns = Math.floor(Math.random() * 4); turns > 0; turns--) await new Promise(setImmediate);
            return op.kind === 'cancel' ? logs[op.conn].requestCancel(runId) : logs[op.conn].append(event(sessionId, runId, op.kind, { content: op.kind }));
          }),
        );
        const at = (kind: Op['kind']) => results.filter((_, i) => ops[i].kind === kind);
        return { runId, cancelAccepted: at('cancel')[0] as boolean, done: at('done')[0] as AppendResult, texts: at('text') as AppendResult[] };
      }),
    );

    const marked = new Promise<void>((resolve) => (onMarker = resolve));
    await conns[0].set('spec-race-marker', '1', 'EX', 60);
    await marked;

    for (const { runId, cancelAccepted, done, texts } of outcomes) {
      const order = trace.get(runId) ?? '';
      // Only pushes before the cancel and the done; after the cancel, only the done's own push.
      expect([runId, order]).toEqual([runId, expect.stringMatching(cancelAccepted ? /^R+CRD$/ : /^R+RDC$/)]);
      expect(done.status).toBe('appended');
      if (!cancelAccepted) expect(texts.map((t) => t.status)).not.toContain('cancelled');
      const stored = await logs[0].range(runId);
      const pushes = order.split('').filter((t) => t === 'R').length;
      expect(stored.map((e) => e.seq)).toEqual(seqs(pushes));
      expect(stored.filter((e) => e.event_type === 'done')).toEqual([stored.at(-1)]);
      expect(texts.filter((t) => t.status === 'appended')).toHaveLength(pushes - 2);
    }
    // Both orders happened, so both branches were exercised.
    expect(outcomes.some((o) => o.cancelAccepted)).toBe(true);
    expect(outcomes.some((o) => !o.cancelAccepted)).toBe(true);
  });
});
