import { randomUUID } from 'node:crypto';
import type { EventDict } from '#core/events/execution-event.js';
import { waitUntil } from '#test/support/event-waits.js';
import { harnessRedisUrl } from '#test/support/harness-redis.js';
import { createRedis, type RedisClient } from './redis-connection.js';
import { RunEventLog } from './run-event-log.js';
import { redisKeys } from './redis-keys.js';
import { followEvents, REPLAY_PAGE } from './run-event-stream.js';
import { RunEventRelay } from './run-event-relay.js';

/** followEvents against the harness Redis: a real log, and a real relay on its own subscriber. */

let commands: RedisClient;
let subscriber: RedisClient;
let log: RunEventLog;
let relay: RunEventRelay;

const id = (kind: string) => `spec-${kind}-${randomUUID()}`;
const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

/** Appends a run's events in order: texts, and its done as event number `total`. */
function runWriter(sessionId: string, runId: string, total: number) {
  let appended = 0;
  return {
    get appended() {
      return appended;
    },
    async append(count: number): Promise<void> {
      for (const end = Math.min(total, appended + count); appended < end; ) {
        const seq = appended + 1;
        const envelope = { timestamp: '', session_id: sessionId, run_id: runId, seq: 0 };
        const event: EventDict = seq === total ? { event_type: 'done', ...envelope, cancelled: false } : { event_type: 'text', ...envelope, content: `e${seq}`, is_final: false };
        const result = await log.append(event);
        if (result.status !== 'appended' || result.event.seq !== seq) throw new Error(`append ${seq} of ${runId}: ${JSON.stringify(result)}`);
        appended = seq;
      }
    },
  };
}

/**
 * Watches the run, runs `write` (which returns the last seq it appended), and resolves once
 * the relay has handed that event to its listeners. The relay calls every listener of a message
 * in one go, so by then every follower of the run has seen it too.
 */
async function writeLive(runId: string, write: () => Promise<number>): Promise<void> {
  let highest = 0;
  let target = Infinity;
  let wake = () => {};
  const stop = await relay.watch(runId, (event) => {
    highest = Math.max(highest, event.seq);
    if (highest >= target) wake();
  });
  try {
    target = await write();
    if (highest < target) await new Promise<void>((resolve) => (wake = resolve));
  } finally {
    stop();
  }
}

/** The real log, calling `hooks` around each replay read, and counting reads. */
function hookedLog(hooks: { before?: () => Promise<void>; after?: () => Promise<void> }) {
  const wrapped = Object.create(log) as RunEventLog & { reads: number };
  wrapped.reads = 0;
  wrapped.rangeRaw = async (runId: string, afterSeq?: number, count?: number) => {
    wrapped.reads++;
    await hooks.before?.();
    const page = await log.rangeRaw(runId, afterSeq, count);
    await hooks.after?.();
    return page;
  };
  return wrapped;
}

function follower() {
  const seen: Array<[number, boolean]> = [];
  /** Events whose JSON text as published did not come with them (what the gateway forwards unchanged). */
  const withoutRaw: number[] = [];
  let end: (how: 'done' | 'ended') => void = () => {};
  const ended = new Promise<'done' | 'ended'>((resolve) => (end = resolve));
  return {
    seen,
    withoutRaw,
    ended,
    onEvent: (event: EventDict, live: boolean, raw?: string) => {
      seen.push([event.seq, live]);
      if (raw === undefined || JSON.stringify(JSON.parse(raw)) !== JSON.stringify(event)) withoutRaw.push(event.seq);
      if (event.event_type === 'done') end('done');
    },
    onEnded: () => end('ended'),
  };
}

beforeAll(async () => {
  const url = harnessRedisUrl();
  commands = createRedis(url, 'spec-stream-commands');
  subscriber = createRedis(url, 'spec-stream-subscriber');
  // Subscribing before the connection's ready check has run makes ioredis fail that check.
  await Promise.all([commands.ping(), subscriber.ping()]);
  log = new RunEventLog(commands, { retentionSeconds: 60 });
  relay = new RunEventRelay(subscriber, log);
});

afterAll(async () => {
  await Promise.all([commands?.quit(), subscriber?.quit()]);
});

describe('followEvents (Redis)', () => {
  const TOTAL = 30;
  const BEFORE = 15;

  it('resumes a live run from every position: replayed, racing and live events, each once and in order', async () => {
    const sessions = [id('session'), id('session'), id('session')];
    await Promise.all(
      range(0, TOTAL).map(async (afterSeq) => {
        const sessionId = sessions[afterSeq % sessions.length];
        const runId = id('run');
        const writer = runWriter(sessionId, runId, TOTAL);
        await writer.append(BEFORE);
        // Two events land between the subscription and the replay's first read (in both), two
        // after that read and before the live handover (only in the held live events).
        const appendTwo = () => writeLive(runId, async () => (await writer.append(2), writer.appended));
        let firstRead = true;
        const racing = hookedLog({
          before: async () => {
            if (firstRead) await appendTwo();
          },
          after: async () => {
            if (firstRead) (firstRead = false), await appendTwo();
          },
        });
        const f = follower();
        const stop = await followEvents(relay, racing, { runId, afterSeq, onEnded: f.onEnded }, f.onEvent);
        try {
          expect(writer.appended).toBe(BEFORE + 4);
          await writeLive(runId, async () => (await writer.append(TOTAL), writer.appended));
          // What the first read found is replayed; the rest comes live, held or not.
          expect([afterSeq, f.seen]).toEqual([afterSeq, range(afterSeq + 1, TOTAL).map((seq) => [seq, seq > BEFORE + 2])]);
          expect(f.withoutRaw).toEqual([]);
          if (afterSeq < TOTAL) expect(await f.ended).toBe('done');
        } finally {
          stop();
        }
      }),
    );
    expect(relay.watchedRuns).toBe(0);
  });

  it('resumes a finished run from every position, and says so when nothing is left', async () => {
    const sessionId = id('session');
    const runId = id('run');
    await runWriter(sessionId, runId, TOTAL).append(TOTAL);
    for (const afterSeq of range(0, TOTAL)) {
      const f = follower();
      const stop = await followEvents(relay, log, { runId, afterSeq, onEnded: f.onEnded }, f.onEvent);
      stop();
      expect([afterSeq, await f.ended, f.seen]).toEqual([afterSeq, afterSeq < TOTAL ? 'done' : 'ended', range(afterSeq + 1, TOTAL).map((seq) => [seq, false])]);
    }
  });

  it(`reads the log again when more than ${REPLAY_PAGE} live events arrive during the replay`, async () => {
    const sessionId = id('session');
    const runId = id('run');
    const flood = REPLAY_PAGE + 50;
    const total = 10 + flood + 6;
    const writer = runWriter(sessionId, runId, total);
    await writer.append(10);
    let flooded = false;
    const hooked = hookedLog({
      after: async () => {
        if (flooded) return;
        flooded = true;
        await writeLive(runId, async () => (await writer.append(flood), writer.appended));
      },
    });
    const f = follower();
    const stop = await followEvents(relay, hooked, { runId, afterSeq: 3 }, f.onEvent);
    try {
      // The first read saw 10 events; the held live ones overflowed, so the log was read again.
      expect(hooked.reads).toBeGreaterThanOrEqual(2);
      await writer.append(total);
      expect(await f.ended).toBe('done');
      expect(f.seen.map(([seq]) => seq)).toEqual(range(4, total));
      expect(f.seen.filter(([seq, live]) => live !== seq > 10 + flood)).toEqual([]);
    } finally {
      stop();
    }
  });
});

describe('RunEventRelay (Redis)', () => {
  it('relays to every listener of a run, and to one that watches again while the last unsubscribe is in flight', async () => {
    const sessionId = id('session');
    const runId = id('run');
    const writer = runWriter(sessionId, runId, 10);
    const a: number[] = [];
    const b: number[] = [];
    const stopA = await relay.watch(runId, (e) => a.push(e.seq));
    const stopB = await relay.watch(runId, (e) => b.push(e.seq));
    await writeLive(runId, async () => (await writer.append(2), writer.appended));
    stopA();
    await writeLive(runId, async () => (await writer.append(1), writer.appended));
    expect([a, b]).toEqual([
      [1, 2],
      [1, 2, 3],
    ]);
    stopB();
    expect(relay.watchedRuns).toBe(0);
    const c: number[] = [];
    const stopC = await relay.watch(runId, (e) => c.push(e.seq));
    try {
      await writeLive(runId, async () => (await writer.append(1), writer.appended));
      expect(c).toEqual([4]);
    } finally {
      stopC();
    }
  });

  it('reads from the log what its channel lost: an event that skips seqs brings the skipped ones first', async () => {
    const sessionId = id('session');
    const runId = id('run');
    const writer = runWriter(sessionId, runId, 10);
    const seen: number[] = [];
    const stop = await relay.watch(runId, (e) => seen.push(e.seq));
    try {
      await writeLive(runId, async () => (await writer.append(3), writer.appended));
      // Seq 4 lands in the log but its message never reaches the channel (as in a failover).
      const lost = { event_type: 'text', timestamp: '', session_id: sessionId, run_id: runId, content: 'lost', is_final: false };
      const seq = await commands.incr(redisKeys.runSeq(runId));
      await commands.rpush(redisKeys.runLog(runId), JSON.stringify({ seq, ...lost }));
      const next = await log.append({ ...lost, seq: 0, content: 'after' } as EventDict);
      expect(next).toMatchObject({ status: 'appended', event: { seq: 5 } });
      await waitUntil(() => seen.length >= 5);
      expect(seen).toEqual([1, 2, 3, 4, 5]);
    } finally {
      stop();
    }
  });

  it('reads from the log what was published while its subscriber reconnected, the done included', async () => {
    const sessionId = id('session');
    const runId = id('run');
    const writer = runWriter(sessionId, runId, 5);
    const seen: number[] = [];
    const stop = await relay.watch(runId, (e) => seen.push(e.seq));
    try {
      await writeLive(runId, async () => (await writer.append(1), writer.appended));
      const back = new Promise<void>((resolve) => subscriber.once('ready', () => resolve()));
      subscriber.disconnect(true);
      // Published while the subscriber is away: no message reaches it, and no later one shows a gap.
      await writer.append(5);
      await back;
      await waitUntil(() => seen.length >= 5);
      expect(seen).toEqual([1, 2, 3, 4, 5]);
    } finally {
      stop();
    }
  });
});
