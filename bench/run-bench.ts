/**
 * End-to-end latency bench: starts the whole system on loopback (Redis, MariaDB, the scripted
 * LLM server, one gateway, BENCH_WORKERS workers (default 2)), measures the raw floors of its hops, then N concurrent
 * Socket.IO chats for each N, and prints request → run_started and per-event delivery overhead
 * beside the floors and the targets, then cancel → done and worker kill → takeover; before all that, MCP tool
 * calls through the worker's pool beside the bare SDK client (mcp-bench.ts). Figures only: nothing is asserted.
 *
 * `npm run bench` (builds first). Knobs, for experiments: BENCH_SIZES=10,100,1000,
 * BENCH_CHUNKS=50, BENCH_WORKERS=2, BENCH_CPU_PROFILE_DIR=/tmp/prof (V8 CPU profiles of gateway, worker and LLM
 * server, written when they stop; see cpu-profile-hook.ts), BENCH_SKIP_PARSER=1, BENCH_SKIP_CANCEL=1,
 * BENCH_KILLS=20 (worker kill -9 → run continuing on another worker, one run per kill, ≤ 90 s each; 0 skips it;
 * it kills workers, so it runs last; DATAAGENT_JOB_LOCK_MS is left to the workers' default on purpose),
 * BENCH_SKIP_TOKENS=1 (MCP prompt tokens per turn, layered injection vs every full schema; token-bench.ts),
 * BENCH_SKIP_MCP=1, BENCH_MCP_CALLS=2000, BENCH_MCP_USERS=50, BENCH_MCP_SECONDS=5 (MCP through the worker's pool
 * beside the bare SDK client against server-everything on loopback, streamable HTTP and stdio: sequential echo
 * calls per side, new users' first calls cold and warm, calls per second at concurrency 50 for that many seconds
 * per side; it runs first, before the stack starts, on a quiet machine; see mcp-bench.ts),
 * BENCH_SKIP_FAIRNESS=1 (tenant A floods 500 runs while tenant B sends batches of 10: B's request → run_started
 * alone, under the flood with DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT=50 and without it, and A's 429s; on a stack
 * of its own with 100 worker slots, after the MCP bench and before the main stack; see fairness.ts).
 */
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH_API_KEY, startBenchStack, type BenchStack } from './bench-stack.js';
import { checkTargets, formatMcp, formatParserBench, formatReport, formatTakeover, writeReportJson, type BenchReport, type FloorFigure, type RoundFigures } from './bench-report.js';
import { measureCancelLatency } from './cancel-latency.js';
import { formatFairness, measureFairness } from './fairness.js';
import { runChatLoad } from './chat-load.js';
import { measureClockOffset } from './clock-offset.js';
import { measureBullmqFloor } from './floor-bullmq.js';
import { measureRedisPubSubFloor } from './floor-redis-pubsub.js';
import { measureSocketIoFloor } from './floor-socketio.js';
import { measureMcp } from './mcp-bench.js';
import { formatTokens, measureTokens } from './token-bench.js';
import { summarize } from './percentiles.js';
import { CpuMeter } from './process-cpu.js';
import { resultsDir } from './repo-paths.js';
import { measureTakeover, TAKEOVER_MESSAGE } from './takeover.js';
import { Teardown } from './teardown.js';

const SIZES = (process.env.BENCH_SIZES ?? '10,100,1000').split(',').map(Number).filter((n) => n > 0);
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 50);
const CHUNK_INTERVAL_MS = 100;
const STAGGER_MS = 1_000;
const CANCEL_ACTIVE_RUNS = 100;
/** Worker kills for the takeover figure; each waits at most TAKEOVER_GIVE_UP_MS for the run to continue. */
const KILLS = Math.max(0, Number(process.env.BENCH_KILLS ?? 20) || 0);
const TAKEOVER_GIVE_UP_MS = 90_000;
const TAKEOVER_TARGET_MS = 5_000;
/** Worker processes: two, one per core of the reference machine. */
const WORKERS = Math.max(1, Number(process.env.BENCH_WORKERS ?? 2));
const WARMUP_SESSIONS = 50;
const MESSAGE = `[[stamp]] [[chunks:${CHUNKS}]] [[slow:${CHUNK_INTERVAL_MS}]]`;
/** Floors: 2000 sends in bursts of 10 every 10 ms (about 1000/s), after 200 unrecorded ones. */
const FLOOR_PACE = { total: 2_000, burst: 10, everyMs: 10, warmup: 200 };
const MCP = {
  calls: Math.max(1, Number(process.env.BENCH_MCP_CALLS ?? 2_000) || 2_000),
  warmup: 200,
  users: Math.max(1, Number(process.env.BENCH_MCP_USERS ?? 50) || 50),
  concurrency: 50,
  seconds: Math.max(1, Number(process.env.BENCH_MCP_SECONDS ?? 5) || 5),
};

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

async function measureFloors(stack: BenchStack): Promise<FloorFigure[]> {
  log('floor: BullMQ queue.add → Worker processor');
  const bullmq = await measureBullmqFloor(stack.redis.url, { ...FLOOR_PACE, concurrency: 50 });
  log('floor: Redis PUBLISH → subscriber');
  const pubsub = await measureRedisPubSubFloor(stack.redis.url, FLOOR_PACE);
  log('floor: Socket.IO emit → client');
  const socketIo = await measureSocketIoFloor({ clients: 100, eventsPerClient: 20, warmupPerClient: 2, intervalMs: CHUNK_INTERVAL_MS });
  const pace = `n=${FLOOR_PACE.total}, bursts of ${FLOOR_PACE.burst} every ${FLOOR_PACE.everyMs} ms`;
  return [
    { name: 'BullMQ queue.add → Worker processor', how: `${pace}, worker concurrency 50, in-process`, latency: summarize(bullmq) },
    { name: 'Redis PUBLISH → subscriber (ioredis)', how: `${pace}, event-sized JSON, in-process`, latency: summarize(pubsub) },
    { name: 'Socket.IO emit → client receive', how: '100 clients × 20 events at 10/s, plain server in a child process', latency: summarize(socketIo) },
  ];
}

async function runRound(stack: BenchStack, sessions: number): Promise<RoundFigures> {
  const cpu = new CpuMeter(stack.pids);
  cpu.start();
  const result = await runChatLoad({ url: stack.gateway.url, apiKey: BENCH_API_KEY, sessions, message: MESSAGE, staggerMs: STAGGER_MS, timeoutMs: 60_000 });
  const cpuUse = cpu.stop();
  return {
    sessions,
    completed: result.completed,
    failed: result.failed,
    failures: result.failures,
    runStarted: summarize(result.runStartedMs),
    perEventOverhead: summarize(result.eventOverheadMs),
    ack: summarize(result.ackMs),
    emitToWorkerStart: summarize(result.emitToWorkerStartMs),
    llmToWorker: summarize(result.llmToWorkerMs),
    workerToClient: summarize(result.workerToClientMs),
    connectMs: result.connectMs,
    wallMs: result.wallMs,
    clientLoopDelayMs: result.clientLoopDelayMs,
    cpu: cpuUse,
  };
}

/** The parser bench someone else owns, when it is there and built; undefined otherwise. */
async function runParserBenchIfPresent(): Promise<unknown> {
  const specifier = './parser-bench.js';
  let module: { runParserBench?: () => Promise<{ rows?: unknown }> };
  try {
    module = (await import(specifier)) as typeof module;
  } catch (err) {
    log(`parser bench not available (${err instanceof Error ? err.message : String(err)}); skipped`);
    return undefined;
  }
  if (typeof module.runParserBench !== 'function') return undefined;
  log('parser bench (StreamingToolActionDetector)');
  return module.runParserBench();
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

  const report: BenchReport = {
    startedAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown', node: process.version },
    workload: { message: MESSAGE, chunks: CHUNKS, chunkIntervalMs: CHUNK_INTERVAL_MS, staggerMs: STAGGER_MS, warmupSessions: WARMUP_SESSIONS },
    clockOffset: { offsetMs: NaN, rttMs: NaN },
    floors: [],
    rounds: [],
    targets: [],
  };
  let exitCode = 0;
  if (!process.env.BENCH_SKIP_MCP) {
    // Before the stack starts: the MCP figures need none of it, and a quiet machine.
    try {
      report.mcp = await measureMcp(teardown, { ...MCP, log });
    } catch (err) {
      exitCode = 1;
      log(`MCP bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    }
  }
  if (!process.env.BENCH_SKIP_FAIRNESS) {
    // Its own stack, stopped before the main one starts.
    try {
      report.fairness = await measureFairness(teardown, { workers: WORKERS, log });
    } catch (err) {
      exitCode = 1;
      log(`fairness bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    }
  }
  try {
    const stack = await startBenchStack(teardown, {
      workerConcurrency: Math.max(1_100, ...SIZES.map((n) => n + 100)),
      workers: WORKERS,
      cpuProfileDir: process.env.BENCH_CPU_PROFILE_DIR ? path.resolve(process.env.BENCH_CPU_PROFILE_DIR) : undefined,
      log,
    });
    report.clockOffset = await measureClockOffset();
    report.floors = await measureFloors(stack);

    log(`warm-up: ${WARMUP_SESSIONS} sessions`);
    await runChatLoad({ url: stack.gateway.url, apiKey: BENCH_API_KEY, sessions: WARMUP_SESSIONS, message: MESSAGE, staggerMs: STAGGER_MS, timeoutMs: 60_000 });
    for (const sessions of SIZES) {
      await sleep(1_000); // let the previous round's archive writes and unsubscribes finish
      log(`N = ${sessions}`);
      report.rounds.push(await runRound(stack, sessions));
    }
    report.targets = checkTargets(report.rounds);
    if (!process.env.BENCH_SKIP_CANCEL) {
      await sleep(1_000);
      log(`cancel → done with ${CANCEL_ACTIVE_RUNS} active runs`);
      const cancel = await measureCancelLatency({ url: stack.gateway.url, apiKey: BENCH_API_KEY, activeRuns: CANCEL_ACTIVE_RUNS, spacingMs: 10 });
      report.cancel = { activeRuns: CANCEL_ACTIVE_RUNS, latency: summarize(cancel.latencyMs), cancelled: cancel.cancelled, notCancelled: cancel.notCancelled };
    }
    if (KILLS > 0) {
      // Last: it kills worker processes (and starts replacements).
      await sleep(1_000);
      log(`worker kill → takeover: ${KILLS} kills`);
      const takeover = await measureTakeover(stack, { url: stack.gateway.url, apiKey: BENCH_API_KEY, kills: KILLS, giveUpMs: TAKEOVER_GIVE_UP_MS, log });
      const latency = summarize(takeover.latencyMs);
      report.takeover = {
        kills: KILLS,
        workers: Math.max(2, WORKERS),
        workload: TAKEOVER_MESSAGE,
        targetMs: TAKEOVER_TARGET_MS,
        giveUpMs: TAKEOVER_GIVE_UP_MS,
        latency,
        continued: takeover.continued,
        timedOut: takeover.timedOut,
        ended: takeover.ended,
        completedAfterTakeover: takeover.completedAfterTakeover,
        met: takeover.continued === KILLS && latency.max <= TAKEOVER_TARGET_MS,
        samples: takeover.samples,
      };
    }
  } catch (err) {
    exitCode = 1;
    log(`failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
  } finally {
    log('stopping the stack');
    await teardown.runAll(log);
  }

  if (report.rounds.length > 0 || report.floors.length > 0) console.log(`\n${formatReport(report)}\n`);
  if (report.cancel) {
    const { latency, activeRuns, cancelled, notCancelled } = report.cancel;
    console.log(
      `Cancel → done (client sends cancel over Socket.IO → receives done{cancelled}), ${activeRuns} runs streaming, one cancel every 10 ms:\n` +
        `  p50 ${latency.p50.toFixed(2)} ms   p99 ${latency.p99.toFixed(2)} ms   max ${latency.max.toFixed(2)} ms   (${cancelled} cancelled, ${notCancelled} not)\n` +
        `  requirement ≤ 1000 ms: ${latency.max <= 1000 ? 'met' : 'NOT MET'}; target p99 ≤ 100 ms: ${latency.p99 <= 100 ? 'met' : 'NOT MET'}\n`,
    );
  }
  if (report.takeover) console.log(`${formatTakeover(report.takeover)}\n`);
  if (report.mcp) console.log(`${formatMcp(report.mcp)}\n`);
  if (report.fairness) console.log(`${formatFairness(report.fairness)}\n`);
  if (!process.env.BENCH_SKIP_TOKENS) {
    try {
      report.tokens = await measureTokens();
      console.log(`${formatTokens(report.tokens)}\n`);
    } catch (err) {
      exitCode = 1;
      log(`token bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    }
  }
  if (exitCode === 0 && !process.env.BENCH_SKIP_PARSER) {
    try {
      report.parserBench = await runParserBenchIfPresent();
      if (report.parserBench) console.log(`${formatParserBench(report.parserBench)}\n`);
    } catch (err) {
      log(`parser bench failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  report.durationSeconds = (Date.now() - started) / 1000;
  const file = path.join(resultsDir, 'latest.json');
  await writeReportJson(report, file);
  log(`figures written to ${path.relative(process.cwd(), file) || file}; bench took ${report.durationSeconds.toFixed(0)} s`);
  return exitCode;
}

process.exitCode = await main();
