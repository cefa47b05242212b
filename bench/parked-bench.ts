/**
 * What runs waiting for a person cost the others. One worker of WORKER_SLOTS slots; alice leaves
 * WAITING runs waiting on approval; bob's chats are timed request → run_started at the client,
 * on the idle stack and then beside alice's waiting runs, once with parking (the default) and
 * once with DATAAGENT_HITL_PARK_AFTER set past the bench (runs wait on their worker, as before
 * parking existed). Then alice approves all of them: time until every one has its done.
 * Each variant on a stack of its own. Figures only: nothing is asserted.
 */
import type { Socket } from 'socket.io-client';
import type { EventDict } from '#core/events/execution-event.js';
import { api, connectChat } from '#test/support/chat-clients.js';
import { EventCollector, runEvent, sendChat } from '#test/support/event-waits.js';
import { startBenchStack } from './bench-stack.js';
import { summarize, type LatencySummary } from './percentiles.js';
import { Teardown } from './teardown.js';

const ALICE_KEY = 'bench-parked-alice';
const BOB_KEY = 'bench-parked-bob';
const WORKER_SLOTS = 5;
const WAITING = 50;
const BOB_CHATS = 20;
/** A chat of bob's that has not started by then counts as not started. */
const GIVE_UP_MS = 10_000;

export interface ParkedVariant {
  /** Bob's request → run_started with nothing else going on, ms. */
  idle: LatencySummary;
  /** The same beside alice's waiting runs, ms (chats that started). */
  beside: LatencySummary;
  /** Bob's chats that had not started GIVE_UP_MS after they were sent. */
  notStarted: number;
  /** Bob's chats sent beside them (the first that does not start ends the round). */
  sent: number;
  /** Alice approves every waiting run at once → the last of them has its done, ms (NaN: not all ended within a minute; absent: not measured). */
  approveAllMs?: number;
}

export interface ParkedFigures {
  slots: number;
  waiting: number;
  bobChats: number;
  giveUpMs: number;
  parked: ParkedVariant;
  held: ParkedVariant;
}

export async function measureParked(teardown: Teardown, log: (line: string) => void): Promise<ParkedFigures> {
  log(`parked runs: ${WAITING} waiting on approval, ${WORKER_SLOTS} worker slots, parking on`);
  const parked = await variant(teardown, log, {}, WAITING);
  log('parked runs: the same with runs waiting on their worker (DATAAGENT_HITL_PARK_AFTER=3600)');
  // Held on the worker, only as many runs as it has slots get to ask; the rest queue behind them.
  const held = await variant(teardown, log, { DATAAGENT_HITL_PARK_AFTER: '3600' }, WORKER_SLOTS);
  return { slots: WORKER_SLOTS, waiting: WAITING, bobChats: BOB_CHATS, giveUpMs: GIVE_UP_MS, parked, held };
}

async function variant(teardown: Teardown, log: (line: string) => void, env: NodeJS.ProcessEnv, asking: number): Promise<ParkedVariant> {
  const own = new Teardown();
  teardown.add('parked-runs stack', () => own.runAll(log));
  try {
    const stack = await startBenchStack(own, {
      workers: 1,
      workerConcurrency: WORKER_SLOTS,
      env: { DATAAGENT_API_KEYS: `${ALICE_KEY}:bench:alice,${BOB_KEY}:bench:bob`, DATAAGENT_HITL_TIMEOUT: '600', ...env },
      log,
    });
    const url = stack.gateway.url;
    const alice = await connectChat(url, ALICE_KEY);
    const bob = await connectChat(url, BOB_KEY);
    own.add('sockets', async () => {
      alice.disconnect();
      bob.disconnect();
    });
    const aliceEvents = new EventCollector(alice);
    const bobEvents = new EventCollector(bob);
    await timeChats(bob, bobEvents, 5); // warm-up
    const idle = await timeChats(bob, bobEvents, BOB_CHATS);

    const waiting = await Promise.all(Array.from({ length: WAITING }, (_, i) => sendChat(alice, { message: `[[tool:write_file {"path":"bench/parked-${i}.txt","content":"x"}]]` })));
    const requests = await Promise.all(waiting.slice(0, asking).map((w) => aliceEvents.next(runEvent(w.run_id, 'hitl_request'), 60_000)));
    // Parking happens right after the question goes out; a moment for the last jobs to leave their slots.
    await new Promise((r) => setTimeout(r, 500));
    const beside = await timeChats(bob, bobEvents, BOB_CHATS);
    if (asking < WAITING) return { idle: idle.started, beside: beside.started, notStarted: beside.notStarted, sent: beside.sent };

    const approving = Date.now();
    await Promise.all(requests.map((r) => api(url, 'POST', `/hitl/${encodeURIComponent(r.request_id)}`, { apiKey: ALICE_KEY, body: { decision: 'approve' } })));
    const ended = await Promise.all(waiting.map((w) => aliceEvents.done(w.run_id, 60_000).then(() => true, () => false)));
    const approveAllMs = ended.every(Boolean) ? Date.now() - approving : NaN;
    return { idle: idle.started, beside: beside.started, notStarted: beside.notStarted, sent: beside.sent, approveAllMs };
  } finally {
    await own.runAll(log);
  }
}

/** Sends up to `count` short chats one after another, each timed to its run_started; the first given up on ends it. */
async function timeChats(socket: Socket, events: EventCollector, count: number): Promise<{ started: LatencySummary; notStarted: number; sent: number }> {
  const samples: number[] = [];
  let notStarted = 0;
  let sent = 0;
  for (let i = 0; i < count && notStarted === 0; i++, sent++) {
    const at = performance.now();
    const ack = await sendChat(socket, { message: 'hello' });
    const started = await events.next((e: EventDict) => e.run_id === ack.run_id && e.event_type === 'run_started', GIVE_UP_MS).then(
      () => true,
      () => false,
    );
    if (started) samples.push(performance.now() - at);
    else notStarted++;
  }
  return { started: summarize(samples), notStarted, sent };
}

export function formatParked(f: ParkedFigures): string {
  const ms = (s: LatencySummary) => (s.count === 0 ? 'none started' : `p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms (${s.count})`);
  const row = (name: string, v: ParkedVariant) =>
    [
      `  ${name}:`,
      `    ${"another user's chat → run_started, idle:".padEnd(50)}${ms(v.idle)}`,
      `    ${'the same beside the waiting runs:'.padEnd(50)}${ms(v.beside)}${v.notStarted ? `; ${v.notStarted} of ${v.sent} not started within ${f.giveUpMs / 1000} s` : ''}`,
      ...(v.approveAllMs === undefined ? [] : [`    ${`approve all ${f.waiting} → every one done:`.padEnd(50)}${Number.isNaN(v.approveAllMs) ? 'not all within 60 s' : `${v.approveAllMs} ms`}`]),
    ].join('\n');
  return [`Runs waiting for a person (${f.slots} worker slots, ${f.waiting} runs waiting on approval)`, row('parked (default)', f.parked), row('held on the worker (DATAAGENT_HITL_PARK_AFTER=3600)', f.held)].join('\n');
}
