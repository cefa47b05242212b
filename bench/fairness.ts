/**
 * Fairness between tenants: tenant A floods FLOOD_RUNS long runs while tenant B sends batches of
 * 10 short ones, and B's request → run_started is timed at the client beside B alone. On a stack
 * of its own whose workers have fewer slots than the flood, so runs nobody refuses queue ahead of
 * B's: once through a gateway with DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT (A at its limit gets
 * 429 `tenant_run_limit`), once through a second gateway without it, both on the same workers.
 * Figures only: nothing is asserted.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Socket } from 'socket.io-client';
import type { EventDict } from '#core/events/execution-event.js';
import { connectChat } from '#test/support/chat-clients.js';
import { startBenchStack } from './bench-stack.js';
import { epochNow } from './clock.js';
import { summarize, type LatencySummary } from './percentiles.js';
import { Teardown } from './teardown.js';

const TENANT_A_KEY = 'bench-tenant-a-key';
const TENANT_B_KEY = 'bench-tenant-b-key';
/** Worker slots over all workers: above the tenant limit (so B finds free ones), far below the flood. */
const WORKER_SLOTS = 100;
const TENANT_RUN_LIMIT = 50;
const FLOOD_RUNS = 500;
/** About 5 s of chunks: A's runs hold their slots for as long as B's batches are being sent. */
const FLOOD_MESSAGE = '[[chunks:50]] [[slow:100]]';
/** Each chat opens a session of its own; 10 a socket stay inside a socket's message burst. */
const FLOOD_CHATS_PER_SOCKET = 10;
const B_BATCH = 10;
const B_BATCHES = 5;
const B_GAP_MS = 250;
/** The scripted model's short fixed answer. */
const B_MESSAGE = 'hello';
const TARGET_RATIO = 2;
/** A chat without an acknowledgement, or a B run without run_started, this long after sending counts as failed. */
const GIVE_UP_MS = 60_000;

type ChatAck = { ok: true; run_id?: string } | { ok: false; error_code: string };

/** Tenant B's chats of one phase. */
export interface TenantBFigures {
  /** Client emits the chat → client receives that run's run_started, ms. */
  runStarted: LatencySummary;
  /** Chats that never reached run_started, by reason (`refused:<code>`, `timeout`). */
  failures: Record<string, number>;
}

/** What A's flood got: admitted runs and refusals by error code (`tenant_run_limit` is the tenant limit's 429). */
export interface FloodFigures {
  admitted: number;
  refused: Record<string, number>;
}

export interface LoadedFigures extends TenantBFigures {
  flood: FloodFigures;
  /** From A's first chat to the last of its 500 answers (admitted or 429), ms. */
  floodAnsweredMs: number;
  /** B's chats went out together with A's burst, or once every one of A's chats was answered. */
  timing: BTiming;
  /** This phase's B p99 over the unloaded B p99. */
  p99Ratio: number;
  met: boolean;
}

export interface FairnessFigures {
  workers: number;
  workerSlots: number;
  tenantRunLimit: number;
  floodRuns: number;
  floodMessage: string;
  floodSockets: number;
  tenantB: { batch: number; batches: number; gapMs: number; message: string };
  targetRatio: number;
  unloaded: TenantBFigures;
  /** B sent while A's admitted runs stream and the rest were refused: the fairness the limit gives. */
  withLimit: LoadedFigures;
  /** B sent at the same moment as A's 500: B's chats wait behind the burst in the gateway's event loop. */
  withLimitBurst: LoadedFigures;
  withoutLimit: LoadedFigures;
}

type BTiming = 'with_burst' | 'after_answers';

export interface FairnessOptions {
  /** Worker processes; the WORKER_SLOTS are shared out among them. */
  workers: number;
  log: (line: string) => void;
}

/**
 * Starts its own stack (stopped before it returns, and registered with `teardown` for an
 * interrupt), then measures B unloaded, B under A's flood with the tenant limit, and without it.
 */
export async function measureFairness(teardown: Teardown, options: FairnessOptions): Promise<FairnessFigures> {
  const { log } = options;
  const started = Date.now();
  const own = new Teardown();
  teardown.add('fairness stack', () => own.runAll(log));
  try {
    const stack = await startBenchStack(own, {
      workers: options.workers,
      workerConcurrency: Math.ceil(WORKER_SLOTS / options.workers),
      env: {
        DATAAGENT_API_KEYS: `${TENANT_A_KEY}:tenant-a:flooder,${TENANT_B_KEY}:tenant-b:steady`,
        DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT: String(TENANT_RUN_LIMIT),
      },
      log,
    });
    const unlimited = await stack.startGateway({ DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT: '0' });
    log('fairness: warm-up, tenant B on both gateways');
    for (const url of [stack.gateway.url, unlimited.url]) await tenantBAlone(url);
    log('fairness: tenant B alone');
    const unloaded = await tenantBAlone(stack.gateway.url);
    log(`fairness: tenant A floods ${FLOOD_RUNS} runs, tenant limit ${TENANT_RUN_LIMIT}; B after A's answers`);
    const withLimit = await underFlood(stack.gateway.url, unloaded, { timing: 'after_answers', awaitFloodEnd: true, log });
    log(`fairness: tenant A floods ${FLOOD_RUNS} runs, tenant limit ${TENANT_RUN_LIMIT}; B with the burst`);
    const withLimitBurst = await underFlood(stack.gateway.url, unloaded, { timing: 'with_burst', awaitFloodEnd: true, log });
    log(`fairness: tenant A floods ${FLOOD_RUNS} runs, no tenant limit`);
    // Last: its queued runs are left to the stack's stop.
    const withoutLimit = await underFlood(unlimited.url, unloaded, { timing: 'after_answers', awaitFloodEnd: false, log });
    return {
      workers: options.workers,
      workerSlots: Math.ceil(WORKER_SLOTS / options.workers) * options.workers,
      tenantRunLimit: TENANT_RUN_LIMIT,
      floodRuns: FLOOD_RUNS,
      floodMessage: FLOOD_MESSAGE,
      floodSockets: FLOOD_RUNS / FLOOD_CHATS_PER_SOCKET,
      tenantB: { batch: B_BATCH, batches: B_BATCHES, gapMs: B_GAP_MS, message: B_MESSAGE },
      targetRatio: TARGET_RATIO,
      unloaded,
      withLimit,
      withLimitBurst,
      withoutLimit,
    };
  } finally {
    log(`fairness: stopping its stack (${((Date.now() - started) / 1000).toFixed(0)} s so far)`);
    await own.runAll(log);
  }
}

async function tenantBAlone(url: string): Promise<TenantBFigures> {
  const sockets = await connectMany(url, TENANT_B_KEY, B_BATCH * B_BATCHES);
  try {
    return await sendTenantB(sockets);
  } finally {
    for (const socket of sockets) socket.disconnect();
  }
}

/**
 * A's flood, and B's batches with it or once A's chats are all answered; with `awaitFloodEnd`,
 * returns only after A's admitted runs are done, so the next phase starts on free slots.
 */
async function underFlood(url: string, unloaded: TenantBFigures, options: { timing: BTiming; awaitFloodEnd: boolean; log: (line: string) => void }): Promise<LoadedFigures> {
  const sockets: Socket[] = [];
  try {
    const a = await connectMany(url, TENANT_A_KEY, FLOOD_RUNS / FLOOD_CHATS_PER_SOCKET);
    sockets.push(...a);
    const b = await connectMany(url, TENANT_B_KEY, B_BATCH * B_BATCHES);
    sockets.push(...b);
    const floodDone = countDone(a);
    const floodStarted = performance.now();
    const flooding = fireFlood(a).then((figures) => ({ figures, answeredMs: performance.now() - floodStarted }));
    if (options.timing === 'after_answers') await flooding;
    const tenantB = await sendTenantB(b);
    const { figures: flood, answeredMs: floodAnsweredMs } = await flooding;
    if (options.awaitFloodEnd && !(await floodDone(flood.admitted, GIVE_UP_MS))) {
      options.log(`fairness: not all of A's ${flood.admitted} admitted runs ended within ${GIVE_UP_MS / 1000} s; going on`);
    }
    const p99Ratio = tenantB.runStarted.p99 / unloaded.runStarted.p99;
    return { ...tenantB, flood, floodAnsweredMs, timing: options.timing, p99Ratio, met: p99Ratio <= TARGET_RATIO };
  } finally {
    for (const socket of sockets) socket.disconnect();
  }
}

/** Connects `count` sockets with one key; on a refusal, disconnects the others and throws. */
async function connectMany(url: string, apiKey: string, count: number): Promise<Socket[]> {
  const outcomes = await Promise.allSettled(Array.from({ length: count }, () => connectChat(url, apiKey)));
  const sockets = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  const refused = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (refused) {
    for (const socket of sockets) socket.disconnect();
    throw new Error(`a socket of ${count} could not connect: ${String(refused.reason)}`);
  }
  return sockets;
}

/** All of A's chats at once, spread over its sockets; resolves when every one is acknowledged (or given up on). */
function fireFlood(sockets: Socket[]): Promise<FloodFigures> {
  const figures: FloodFigures = { admitted: 0, refused: {} };
  const refuse = (code: string) => (figures.refused[code] = (figures.refused[code] ?? 0) + 1);
  const acks = Array.from({ length: FLOOD_RUNS }, (_, i) =>
    sockets[i % sockets.length]!
      .timeout(GIVE_UP_MS)
      .emitWithAck('message', { type: 'chat', payload: { message: FLOOD_MESSAGE } })
      .then(
        (ack: ChatAck) => (ack.ok ? figures.admitted++ : refuse(ack.error_code)),
        () => refuse('no_ack'),
      ),
  );
  return Promise.all(acks).then(() => figures);
}

/** B's chats, one per socket, in batches B_GAP_MS apart; each timed from its emit to its socket's run_started. */
async function sendTenantB(sockets: Socket[]): Promise<TenantBFigures> {
  const runStartedMs: number[] = [];
  const failures: Record<string, number> = {};
  await Promise.all(
    sockets.map(async (socket, i) => {
      await sleep(Math.floor(i / B_BATCH) * B_GAP_MS);
      const outcome = await new Promise<number | string>((resolve) => {
        const sentAt = epochNow();
        const onEvent = (event: EventDict) => {
          if (event.event_type === 'run_started') finish(epochNow() - sentAt);
        };
        const timer = setTimeout(() => finish('timeout'), GIVE_UP_MS);
        function finish(result: number | string) {
          clearTimeout(timer);
          socket.off('event', onEvent);
          resolve(result);
        }
        socket.on('event', onEvent);
        socket.emit('message', { type: 'chat', payload: { message: B_MESSAGE } }, (ack: ChatAck) => {
          if (!ack.ok) finish(`refused:${ack.error_code}`);
        });
      });
      if (typeof outcome === 'number') runStartedMs.push(outcome);
      else failures[outcome] = (failures[outcome] ?? 0) + 1;
    }),
  );
  return { runStarted: summarize(runStartedMs), failures };
}

/** Counts `done` events on the sockets; the returned wait resolves true once `n` arrived, false after `timeoutMs`. */
function countDone(sockets: Socket[]): (n: number, timeoutMs: number) => Promise<boolean> {
  let done = 0;
  let wake: () => void = () => undefined;
  for (const socket of sockets) {
    socket.on('event', (event: EventDict) => {
      if (event.event_type !== 'done') return;
      done++;
      wake();
    });
  }
  return (n, timeoutMs) =>
    new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      wake = () => {
        if (done < n) return;
        clearTimeout(timer);
        resolve(true);
      };
      wake();
    });
}

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(value < 10 ? 2 : 1) : '–').padStart(9);
const count = (record: Record<string, number>) => Object.entries(record).map(([k, v]) => `${k}×${v}`).join(', ');

/** The fairness figures as the lines the bench prints. */
export function formatFairness(f: FairnessFigures): string {
  const row = (label: string, b: TenantBFigures | LoadedFigures) => {
    const loaded = 'flood' in b ? b : undefined;
    const ratio = loaded ? `${`${loaded.p99Ratio.toFixed(loaded.p99Ratio < 10 ? 2 : 0)}×`.padStart(8)} ${loaded.met ? 'met' : 'NOT MET'}` : '';
    const flood = loaded ? `${String(loaded.flood.admitted).padStart(8)} ${String(loaded.flood.refused.tenant_run_limit ?? 0).padStart(18)}` : `${'–'.padStart(8)} ${'–'.padStart(18)}`;
    const others = Object.entries(loaded?.flood.refused ?? {}).filter(([code]) => code !== 'tenant_run_limit');
    const notes = [
      Object.keys(b.failures).length > 0 ? `B failed: ${count(b.failures)}` : '',
      others.length > 0 ? `A otherwise refused: ${count(Object.fromEntries(others))}` : '',
    ].filter(Boolean);
    return `  ${label.padEnd(44)} ${ms(b.runStarted.p50)} ${ms(b.runStarted.p99)} ${ms(b.runStarted.max)} | ${ratio.padEnd(16)} | ${flood}${notes.length > 0 ? `   (${notes.join('; ')})` : ''}`;
  };
  return [
    `Fairness: tenant A fires ${f.floodRuns} chats of "${f.floodMessage}" (about 5 s each) as fast as it can over ${f.floodSockets} sockets, a session each; ` +
      `tenant B sends ${f.tenantB.batches} batches of ${f.tenantB.batch} chats ("${f.tenantB.message}"), one batch every ${f.tenantB.gapMs} ms, ` +
      `once A's chats are answered (while A's admitted runs stream) or together with A's burst. ` +
      `${f.workers} worker(s), ${f.workerSlots} slots in all; its own stack, two gateways on the same workers.`,
    `                                                 B request → run_started ms   | B p99 / unloaded |   A's ${f.floodRuns} chats`,
    `                                                     p50       p99       max   |   target ≤ ${f.targetRatio}×    | admitted  429 tenant_run_limit`,
    row('B alone (unloaded)', f.unloaded),
    row(`A flooding, limit ${f.tenantRunLimit}, B after A's answers`, f.withLimit),
    row(`A flooding, limit ${f.tenantRunLimit}, B with A's burst`, f.withLimitBurst),
    row("A flooding, no limit, B after A's answers", f.withoutLimit),
    `  A's ${f.floodRuns} chats were all answered in ${ms(f.withLimit.floodAnsweredMs).trim()} ms with the limit, ${ms(f.withoutLimit.floodAnsweredMs).trim()} ms without; ` +
      `B's chats sent with the burst wait behind them in the gateway's event loop.`,
    ...(f.withLimit.flood.admitted > f.tenantRunLimit ? [`  (the limit admitted ${f.withLimit.flood.admitted} of A's runs, not ${f.tenantRunLimit})`] : []),
  ].join('\n');
}
