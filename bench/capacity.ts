/**
 * Capacity bench: how many concurrent streaming, tool-calling agent runs this machine holds
 * within a latency objective. Starts the whole system on loopback (Redis, MariaDB, the scripted
 * LLM server, one gateway, BENCH_WORKERS workers), warms it up, then ramps levels of concurrent
 * runs over Socket.IO, one round per level, until a level breaks the objective:
 *
 * - each run streams CAPACITY_RATE stamped chunks per second for CAPACITY_SECONDS, then calls the
 *   built-in `write_todos` tool (no approval needed: a chat before the ramp checks its run ends
 *   with a tool_result, not a hitl_request), then streams a short answer with the tool's result;
 * - a level holds when per-event overhead p99 (client receive − the LLM server's write stamp)
 *   ≤ CAPACITY_EVENT_P99_MS, request → run_started p99 ≤ CAPACITY_START_P99_MS, no run failed or
 *   gapped and every run's tool call completed; the ramp stops at the first level that breaks
 *   (its figures are shown too) or after the last one;
 * - per level: run start and per-event p50/p99, events/s delivered, failed and gapped runs, tool
 *   calls completed, CPU µs per delivered event of every process (gateway, each worker, Redis,
 *   MariaDB, LLM server, the bench's clients; /proc, from the first chat sent to 1 s after the
 *   last run ended), the whole machine's busy share and the bench client's event-loop lag.
 *
 * It prints a table and the headline ("N concurrent streaming, tool-calling runs held on this
 * machine …"), and writes bench/results/capacity.json and bench/results/capacity.html (inline SVG
 * charts of p99 and CPU per event against concurrent runs, the table, and a sizing of gateway,
 * worker, Redis and MySQL cores for 1k / 10k / 100k people: capacity-sizing.ts). Figures only:
 * nothing is asserted; it exits 1 only when the stack could not start.
 *
 * `npm run bench:capacity` (builds first). Knobs:
 * CAPACITY_LEVELS=50,100,200,300,400,600,800,1000,1200,1500,2000 (concurrent runs per level, ramped in
 * increasing order), CAPACITY_RATE=10 (chunks per second of each run's stream), CAPACITY_SECONDS=10
 * (how long each run streams before its tool call), CAPACITY_EVENT_P99_MS=250, CAPACITY_START_P99_MS=1000
 * (the objectives), CAPACITY_PER_RUN=300 (short tool-calling runs, one chunk each, sent over 2 s
 * before the ramp, for CPU per run in the sizing; 0 skips them and the sizing keeps per-run costs
 * inside the per-event figures), CAPACITY_UTILIZATION=0.7 (how busy the sizing plans a core),
 * BENCH_WORKERS=2 and BENCH_GATEWAY_PROCESSES=1 (as `npm run bench`; worker concurrency is the
 * largest level + 100 per worker, so no run waits for a slot).
 */
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EventDict } from '#core/events/execution-event.js';
import { chatOverSocket, connectChat } from '../test/support/chat-clients.js';
import { BENCH_API_KEY, startBenchStack, type BenchStack } from './bench-stack.js';
import { formatCapacity, writeCapacityHtml, writeCapacityJson, type CapacityReport, type LevelFigures, type PerRunFigures } from './capacity-report.js';
import { DEFAULT_ASSUMPTIONS, sizing, sizingCosts, sizingFormula, type SizingFigures } from './capacity-sizing.js';
import { runChatLoad, type ChatLoadResult } from './chat-load.js';
import { summarize } from './percentiles.js';
import { CpuMeter, OTHER_PROCESSES, type CpuUse } from './process-cpu.js';
import { resultsDir } from './repo-paths.js';
import { Teardown } from './teardown.js';

const positive = (n: number) => Number.isFinite(n) && n > 0;
const envNumber = (name: string, fallback: number) => {
  const value = Number(process.env[name]);
  return process.env[name] !== undefined && positive(value) ? value : fallback;
};

const LEVELS = [...new Set((process.env.CAPACITY_LEVELS ?? '50,100,200,300,400,600,800,1000,1200,1500,2000').split(',').map((s) => Math.round(Number(s.trim()))).filter(positive))].sort((a, b) => a - b);
const RATE = envNumber('CAPACITY_RATE', 10);
const SECONDS = envNumber('CAPACITY_SECONDS', 10);
const OBJECTIVES = { eventP99Ms: envNumber('CAPACITY_EVENT_P99_MS', 250), startP99Ms: envNumber('CAPACITY_START_P99_MS', 1_000) };
const PER_RUN = Math.max(0, Math.round(Number(process.env.CAPACITY_PER_RUN ?? 300) || 0));
const UTILIZATION = Math.min(1, envNumber('CAPACITY_UTILIZATION', DEFAULT_ASSUMPTIONS.utilization));
const WORKERS = Math.max(1, Number(process.env.BENCH_WORKERS ?? 2) || 2);
const GATEWAY_PROCESSES = Math.max(1, Number(process.env.BENCH_GATEWAY_PROCESSES ?? 1) || 1);
const WORKER_CONCURRENCY = Math.max(...LEVELS, PER_RUN, 0) + 100;

/** A tool every agent has, that needs no approval and touches nothing outside the run. */
const TOOL = 'write_todos';
const TOOL_DIRECTIVE = `[[tool:${TOOL} {"todos":[{"content":"check","status":"pending"}]}]]`;
/** A run streaming `rate` stamped chunks per second for `seconds`, then calling the tool. */
const runMessage = (rate: number, seconds: number) => `[[stamp]] [[chunks:${Math.max(1, Math.round(rate * seconds))}]] [[slow:${Math.round(1000 / rate)}]] ${TOOL_DIRECTIVE}`;
const MESSAGE = runMessage(RATE, SECONDS);
const PER_RUN_MESSAGE = `[[stamp]] [[chunks:1]] ${TOOL_DIRECTIVE}`;
const PER_RUN_STAGGER_MS = 2_000;
const STAGGER_MS = 1_000;
/** After each level's last run, its CPU window stays open this long (archive writes, unsubscribes). */
const SETTLE_MS = 1_000;
const WARMUP_SESSIONS = 50;
const WARMUP_SECONDS = 2;

const log = (line: string) => process.stderr.write(`[capacity] ${line}\n`);

/** Counts tool_result events by status and hitl_request events, as runChatLoad's clients receive them. */
function toolCounter() {
  const counts = { toolResults: {} as Record<string, number>, hitlRequests: 0 };
  const onEvent = (event: EventDict) => {
    if (event.event_type === 'tool_result') counts.toolResults[event.status] = (counts.toolResults[event.status] ?? 0) + 1;
    else if (event.event_type === 'hitl_request') counts.hitlRequests++;
  };
  return { counts, onEvent };
}

/** CPU seconds per role → µs per `per`, with `workers` (every worker role summed) added. */
function cpuPer(cpu: Record<string, CpuUse>, per: number): Record<string, number> {
  const out: Record<string, number> = {};
  let workers = 0;
  for (const [role, use] of Object.entries(cpu)) {
    out[role] = (use.seconds * 1e6) / per;
    if (role.startsWith('worker')) workers += use.seconds;
  }
  out.workers = (workers * 1e6) / per;
  return out;
}

/** One chat before the ramp: its run must end with the tool's result (not wait for an approval). */
async function checkTool(stack: BenchStack): Promise<NonNullable<CapacityReport['toolCheck']>> {
  const socket = await connectChat(stack.gateway.url, BENCH_API_KEY);
  try {
    const events = await chatOverSocket(socket, { message: runMessage(RATE, 0.5) }, 30_000);
    const types = events.map((e) => e.event_type);
    const result = events.find((e): e is Extract<EventDict, { event_type: 'tool_result' }> => e.event_type === 'tool_result');
    const hitl = types.includes('hitl_request');
    const done = events.find((e): e is Extract<EventDict, { event_type: 'done' }> => e.event_type === 'done');
    const ok = !hitl && result?.status === 'success' && done !== undefined;
    const detail = hitl
      ? `${TOOL} asked for approval (hitl_request): pick a tool that needs none`
      : result
        ? `${TOOL} returned ${result.status}; the run ended with done (${events.length} events)`
        : `no tool_result in ${events.length} events (${types.join(', ')})`;
    return { ok, detail, eventTypes: [...new Set(types)] };
  } catch (err) {
    return { ok: false, detail: `the check's chat failed: ${err instanceof Error ? err.message : String(err)}`, eventTypes: [] };
  } finally {
    socket.disconnect();
  }
}

/** The figures of a finished chat load and its CPU window. */
function levelFigures(runs: number, result: ChatLoadResult, cpu: Record<string, CpuUse>, counts: ReturnType<typeof toolCounter>['counts'], windowSeconds: number): LevelFigures {
  const runStarted = summarize(result.runStartedMs);
  const perEventOverhead = summarize(result.eventOverheadMs);
  const toolCallsCompleted = counts.toolResults.success ?? 0;
  const breaches: string[] = [];
  if (!(perEventOverhead.p99 <= OBJECTIVES.eventP99Ms)) breaches.push(`per-event p99 ${Number.isFinite(perEventOverhead.p99) ? perEventOverhead.p99.toFixed(0) : 'unmeasured'} ms > ${OBJECTIVES.eventP99Ms} ms`);
  if (!(runStarted.p99 <= OBJECTIVES.startP99Ms)) breaches.push(`run start p99 ${Number.isFinite(runStarted.p99) ? runStarted.p99.toFixed(0) : 'unmeasured'} ms > ${OBJECTIVES.startP99Ms} ms`);
  if (result.failed > 0) breaches.push(`${result.failed} runs failed (${Object.entries(result.failures).map(([why, n]) => `${why} ${n}`).join(', ')})`);
  if (result.gapped > 0) breaches.push(`${result.gapped} runs gapped (${Object.entries(result.gaps).map(([why, n]) => `${why} ${n}`).join(', ')})`);
  if (toolCallsCompleted < runs) breaches.push(`${runs - toolCallsCompleted} runs without a successful tool result`);
  if (counts.hitlRequests > 0) breaches.push(`${counts.hitlRequests} approval requests`);
  const machineBusy = Object.values(cpu).reduce((sum, use) => sum + (Number.isFinite(use.average) ? use.average : 0), 0) / os.cpus().length;
  const othersBusy = (cpu[OTHER_PROCESSES]?.average ?? NaN) / os.cpus().length;
  return {
    runs,
    held: breaches.length === 0,
    breaches,
    completed: result.completed,
    failed: result.failed,
    failures: result.failures,
    gapped: result.gapped,
    gaps: result.gaps,
    failedOrGapped: result.failedOrGapped,
    toolResults: counts.toolResults,
    toolCallsCompleted,
    hitlRequests: counts.hitlRequests,
    runStarted,
    perEventOverhead,
    eventsReceived: result.eventsReceived,
    eventsPerSecond: result.eventsReceived / (result.wallMs / 1000),
    wallSeconds: result.wallMs / 1000,
    cpuWindowSeconds: windowSeconds,
    clientLoopDelayMs: result.clientLoopDelayMs,
    cpu,
    cpuUsPerEvent: cpuPer(cpu, result.eventsReceived),
    machineBusyPercent: machineBusy,
    othersBusyPercent: othersBusy,
  };
}

/** One level: `runs` concurrent runs of MESSAGE; the CPU window opens as the first chat is sent. */
async function runLevel(stack: BenchStack, runs: number): Promise<LevelFigures> {
  const meter = new CpuMeter(stack.pids, stack.cpuTrees);
  const { counts, onEvent } = toolCounter();
  let openedAt: number | undefined;
  const result = await runChatLoad({
    url: stack.gateway.url,
    apiKey: BENCH_API_KEY,
    sessions: runs,
    message: MESSAGE,
    staggerMs: STAGGER_MS,
    timeoutMs: SECONDS * 1000 + 60_000,
    onFirstEmit: () => {
      openedAt = performance.now();
      meter.start();
    },
    onEvent,
  }).catch((err: unknown) => {
    if (openedAt !== undefined) meter.stop();
    throw err;
  });
  await sleep(SETTLE_MS);
  const cpu = meter.stop();
  return levelFigures(runs, result, cpu, counts, (performance.now() - openedAt!) / 1000);
}

/** Short tool-calling runs for CPU per run: the sizing charges it once per turn. */
async function runPerRun(stack: BenchStack): Promise<PerRunFigures> {
  const meter = new CpuMeter(stack.pids, stack.cpuTrees);
  const { counts, onEvent } = toolCounter();
  let opened = false;
  const result = await runChatLoad({
    url: stack.gateway.url,
    apiKey: BENCH_API_KEY,
    sessions: PER_RUN,
    message: PER_RUN_MESSAGE,
    staggerMs: PER_RUN_STAGGER_MS,
    timeoutMs: 60_000,
    onFirstEmit: () => {
      opened = true;
      meter.start();
    },
    onEvent,
  }).catch((err: unknown) => {
    if (opened) meter.stop();
    throw err;
  });
  await sleep(SETTLE_MS);
  const cpu = meter.stop();
  return {
    runs: PER_RUN,
    message: PER_RUN_MESSAGE,
    staggerMs: PER_RUN_STAGGER_MS,
    completed: result.completed,
    failedOrGapped: result.failedOrGapped,
    toolCallsCompleted: counts.toolResults.success ?? 0,
    eventsPerRun: result.eventsReceived / PER_RUN,
    runStarted: summarize(result.runStartedMs),
    cpuUsPerRun: cpuPer(cpu, PER_RUN),
  };
}

/** The sizing, from the largest level that held (or, when none did, the first level, said so). */
function addSizing(report: CapacityReport): void {
  const held = report.levels.filter((l) => l.held).at(-1);
  const level = held ?? report.levels[0];
  if (!level || !(level.eventsReceived > 0)) return;
  const pick = (us: Record<string, number>) => ({ gateway: us.gateway ?? NaN, workers: us.workers ?? NaN, redis: us.redis ?? NaN, mysql: us.mariadb ?? NaN });
  const perRunUsable = report.perRun && report.perRun.failedOrGapped === 0 && report.perRun.toolCallsCompleted === report.perRun.runs;
  const figures: SizingFigures = {
    eventUs: pick(level.cpuUsPerEvent),
    eventsPerBenchRun: level.eventsReceived / level.runs,
    ...(perRunUsable ? { runUs: pick(report.perRun!.cpuUsPerRun), eventsPerShortRun: report.perRun!.eventsPerRun } : {}),
  };
  const assumptions = { ...DEFAULT_ASSUMPTIONS, utilization: UTILIZATION };
  report.sizing = {
    basedOn: held ? `the CPU per event at ${level.runs} concurrent runs, the largest level that held` : `the CPU per event at ${level.runs} concurrent runs, the smallest level, which did NOT hold`,
    assumptions,
    figures,
    costs: sizingCosts(figures),
    rows: sizing(figures, assumptions),
    formula: sizingFormula(assumptions),
  };
}

async function main(): Promise<number> {
  const started = Date.now();
  const teardown = new Teardown();
  const interrupt = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping everything`);
    void teardown.runAll(log).then(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);

  const report: CapacityReport = {
    startedAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown', node: process.version, loadAverage: os.loadavg() },
    stack: { workers: WORKERS, workerConcurrency: WORKER_CONCURRENCY, gatewayProcesses: GATEWAY_PROCESSES },
    objectives: OBJECTIVES,
    workload: { message: MESSAGE, tool: TOOL, rate: RATE, seconds: SECONDS, chunks: Math.max(1, Math.round(RATE * SECONDS)), staggerMs: STAGGER_MS, settleMs: SETTLE_MS },
    levelsPlanned: LEVELS,
    levels: [],
  };
  let stack: BenchStack;
  try {
    stack = await startBenchStack(teardown, { workerConcurrency: WORKER_CONCURRENCY, workers: WORKERS, gatewayProcesses: GATEWAY_PROCESSES, log });
  } catch (err) {
    log(`the stack could not start: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    await teardown.runAll(log);
    return 1;
  }
  try {
    report.toolCheck = await checkTool(stack);
    log(`tool check: ${report.toolCheck.ok ? 'ok' : 'FAILED'}: ${report.toolCheck.detail}`);
    log(`warm-up: ${WARMUP_SESSIONS} runs`);
    await runChatLoad({ url: stack.gateway.url, apiKey: BENCH_API_KEY, sessions: WARMUP_SESSIONS, message: runMessage(RATE, WARMUP_SECONDS), staggerMs: STAGGER_MS, timeoutMs: 60_000 });
    await sleep(SETTLE_MS);
    if (PER_RUN > 0) {
      log(`CPU per run: ${PER_RUN} runs "${PER_RUN_MESSAGE}" over ${PER_RUN_STAGGER_MS} ms`);
      try {
        report.perRun = await runPerRun(stack);
      } catch (err) {
        log(`CPU per run failed (the sizing keeps per-run costs in the per-event figures): ${err instanceof Error ? err.message : String(err)}`);
      }
      await sleep(SETTLE_MS);
    }
    for (const runs of LEVELS) {
      log(`level ${runs}: ${runs} runs × (${Math.round(RATE * SECONDS)} chunks at ${RATE}/s, then ${TOOL})`);
      let level: LevelFigures;
      try {
        level = await runLevel(stack, runs);
      } catch (err) {
        // The level could not run (e.g. sockets refused): it broke, with nothing measured.
        const message = err instanceof Error ? err.message : String(err);
        level = { ...levelFigures(runs, emptyLoad(runs), {}, { toolResults: {}, hitlRequests: 0 }, 0), breaches: [`could not run: ${message}`], error: message };
      }
      report.levels.push(level);
      log(`level ${runs}: ${level.held ? 'held' : `broke (${level.breaches.join('; ')})`}; start p99 ${level.runStarted.p99.toFixed(0)} ms, event p99 ${level.perEventOverhead.p99.toFixed(1)} ms, ${level.eventsPerSecond.toFixed(0)} events/s, machine ${level.machineBusyPercent.toFixed(0)} % busy (others ${level.othersBusyPercent.toFixed(0)} %)`);
      if (!level.held) break;
    }
  } catch (err) {
    report.error = err instanceof Error ? err.message : String(err);
    log(`failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
  } finally {
    log('stopping the stack');
    await teardown.runAll(log);
  }
  report.heldRuns = report.levels.filter((l) => l.held).at(-1)?.runs;
  report.brokeAtRuns = report.levels.find((l) => !l.held)?.runs;
  addSizing(report);
  report.durationSeconds = (Date.now() - started) / 1000;
  console.log(`\n${formatCapacity(report)}\n`);
  const json = path.join(resultsDir, 'capacity.json');
  const html = path.join(resultsDir, 'capacity.html');
  await writeCapacityJson(report, json);
  await writeCapacityHtml(report, html);
  log(`written: ${path.relative(process.cwd(), json) || json}, ${path.relative(process.cwd(), html) || html}; took ${report.durationSeconds.toFixed(0)} s`);
  return 0;
}

/** A chat load with nothing received, for a level that could not run. */
function emptyLoad(sessions: number): ChatLoadResult {
  return {
    sessions,
    completed: 0,
    failed: sessions,
    failures: { 'not run': sessions },
    runStartedMs: [],
    ackMs: [],
    eventOverheadMs: [],
    llmToWorkerMs: [],
    workerToClientMs: [],
    stampedTextEvents: 0,
    emitToQueuedMs: [],
    emitToWorkerStartMs: [],
    unstampedTextEvents: 0,
    eventsReceived: 0,
    gapped: 0,
    gaps: {},
    failedOrGapped: sessions,
    connectMs: 0,
    wallMs: NaN,
    clientLoopDelayMs: { p50: NaN, p99: NaN, max: NaN },
  };
}

process.exitCode = await main();
