/**
 * End-to-end latency bench: starts the whole system on loopback (Redis, MariaDB, the scripted
 * LLM server, one gateway, BENCH_WORKERS workers (default 2)), measures the raw floors of its hops (and a bare Socket.IO
 * server's CPU per emit), then rounds of concurrent Socket.IO chats, a round being (streams × chunks per second), and prints
 * per round request → run_started, per-event delivery overhead, CPU µs per delivered event (gateway, workers, both) and
 * runs failed or gapped, each round run again on a bare relay of the same hops for CPU per event side by side; then CPU ms per run, cancel → done (spaced over Socket.IO, and a burst over REST), worker kill →
 * takeover, each beside the floors and the targets; before all that, MCP tool calls through the worker's pool beside
 * the bare SDK client (mcp-bench.ts). Figures only: nothing is asserted.
 *
 * `npm run bench` (builds first). Knobs, for experiments:
 * BENCH_ROUNDS=10x10,100x10,100x50,1000x10 (streams x chunks per second; each stream lasts BENCH_STREAM_SECONDS=5, so
 * 10/s is [[chunks:50]] [[slow:100]]), BENCH_SIZES=10,100 (shorthand for N×10/s rounds; BENCH_ROUNDS wins),
 * BENCH_PER_RUN=500 (runs of one chunk each, staggered over 2 s, for CPU ms per run; 0 skips it),
 * BENCH_CANCEL_BURST=100 (REST cancels sent at once while that many runs stream at 50/s; 0 skips it),
 * BENCH_WORKERS=2, BENCH_GATEWAY_PROCESSES=1 (the gateway's DATAAGENT_WORKERS: gateway processes on its port; the gateway's
 * CPU then counts the primary and all of them), BENCH_CPU_PROFILE_DIR=/tmp/prof (V8 CPU profiles of gateway, workers, LLM
 * server and bare relay, written when they stop (see cpu-profile-hook.ts), with the streaming rounds' windows in windows.json;
 * the bench then prints where gateway's and workers' CPU went within those windows: cpu-profile-summary.ts, which also runs
 * alone on the folder), BENCH_SKIP_RELAY=1 (the bare relay of the same hops: each round run again on a Socket.IO server fed
 * by Redis pub/sub and a process publishing the LLM's chunks, for CPU per event beside DataAgent's; bare-relay.ts),
 * BENCH_SKIP_FLOORS=1 (the hop floors), BENCH_SKIP_PARSER=1, BENCH_SKIP_CANCEL=1 (both cancel figures),
 * BENCH_KILLS=20 (worker kill -9 → run continuing on another worker, one run per kill, ≤ 90 s each; 0 skips it;
 * it kills workers, so it runs last; DATAAGENT_JOB_LOCK_MS is left to the workers' default on purpose),
 * BENCH_SKIP_TOKENS=1 (MCP prompt tokens per turn, layered injection vs every full schema; token-bench.ts),
 * BENCH_SKIP_SANDBOX=1, BENCH_SANDBOX_SAMPLES=30 (start of a shell command and a stdio MCP server in bubblewrap vs plain; sandbox-bench.ts),
 * BENCH_SKIP_LLM_STREAM=1, BENCH_LLM_STREAM_PASSES=5 (client CPU µs per chunk reading streamed completions: the openai
 * SDK's stream, SseChunkReader, OpenAIChatModel; after the stack stops; see llm-stream-bench.ts),
 * BENCH_SKIP_MCP=1, BENCH_MCP_CALLS=2000, BENCH_MCP_USERS=50, BENCH_MCP_SECONDS=5 (MCP through the worker's pool
 * beside the bare SDK client against server-everything on loopback, streamable HTTP and stdio: sequential echo
 * calls per side, new users' first calls cold and warm, calls per second at concurrency 50 for that many seconds
 * per side; it runs first, before the stack starts, on a quiet machine; see mcp-bench.ts),
 * BENCH_SKIP_FAIRNESS=1 (tenant A floods 500 runs while tenant B sends batches of 10: B's request → run_started
 * alone, under the flood with DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT=50 and without it, and A's 429s; on a stack
 * of its own with 100 worker slots, after the MCP bench and before the main stack; see fairness.ts),
 * BENCH_SKIP_PARKED=1 (another user's chat → run_started beside 50 runs waiting on approval on 5 worker slots, parked
 * and held on the worker, and approve-all → every one done; two small stacks of its own; see parked-bench.ts),
 * BENCH_SKIP_CLUSTER=1, BENCH_CLUSTER_ROUND=100x50 (the same streaming round on the single Redis and on a Redis Cluster of
 * 3 masters + 3 replicas, side by side, with each master's commands, Redis CPU and CROSSSLOT / MOVED / ASK replies from
 * INFO read around the round; the same streams x chunks/s syntax as BENCH_ROUNDS, first spec only. The single Redis's side
 * is the main stack's round of that spec, its Redis INFO read around it, when BENCH_ROUNDS has it; otherwise that round is
 * run once more on the main stack after its rounds (not shown among them). The cluster's side runs on a stack of its own
 * (same workers, concurrency and gateway processes, DATAAGENT_REDIS_CLUSTER_NODES set; no CPU profiles) after the main
 * stack has stopped, warmed up with the same 50 sessions; see cluster-round.ts).
 */
import { formatSandboxBench, runSandboxBench } from './sandbox-bench.js';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH_API_KEY, cpuProfileEnv, startBenchStack, type BenchStack } from './bench-stack.js';
import { formatCancel, formatMcp, formatParserBench, formatReport, formatTakeover, writeReportJson, type BenchReport, type FloorFigure, type PerRunCpuFigures } from './bench-report.js';
import { startBareRelay } from './bare-relay.js';
import { checkTargets, cpuSplit, roundLabel } from './bench-targets.js';
import { formatProfileSummary, summarizeProfileDir, writeProfileWindows, type ProfileWindow } from './cpu-profile-summary.js';
import { measureCancelBurst } from './cancel-burst.js';
import { measureCancelLatency } from './cancel-latency.js';
import { formatCluster, measureClusterRound, measureRedisRound, type ClusterFigures } from './cluster-round.js';
import { formatFairness, measureFairness } from './fairness.js';
import { formatParked, measureParked } from './parked-bench.js';
import { runChatLoad } from './chat-load.js';
import { measureClockOffset } from './clock-offset.js';
import { measureBullmqFloor } from './floor-bullmq.js';
import { measureRedisPubSubFloor } from './floor-redis-pubsub.js';
import { measureSocketIoFloor } from './floor-socketio.js';
import { measureMcp } from './mcp-bench.js';
import { formatTokens, measureTokens } from './token-bench.js';
import { formatLlmStreamBench, runLlmStreamBench } from './llm-stream-bench.js';
import { summarize } from './percentiles.js';
import { CpuMeter } from './process-cpu.js';
import { resultsDir } from './repo-paths.js';
import { monotonicUs, parseRoundSpecs, runRound, SETTLE_MS, STAGGER_MS, STREAM_SECONDS, streamMessage, warmUp, WARMUP_SESSIONS, type RoundSpec, type RoundTarget } from './streaming-round.js';
import { measureTakeover, TAKEOVER_MESSAGE } from './takeover.js';
import { Teardown } from './teardown.js';

const positive = (n: number) => Number.isFinite(n) && n > 0;
const ROUNDS: RoundSpec[] = process.env.BENCH_ROUNDS
  ? parseRoundSpecs(process.env.BENCH_ROUNDS)
  : process.env.BENCH_SIZES
    ? process.env.BENCH_SIZES.split(',').map(Number).filter(positive).map((streams) => ({ streams, rate: 10 }))
    : [
        { streams: 10, rate: 10 },
        { streams: 100, rate: 10 },
        { streams: 100, rate: 50 },
        { streams: 1000, rate: 10 },
      ];
/** The round run on the single Redis and on the cluster (BENCH_CLUSTER_ROUND; undefined: BENCH_SKIP_CLUSTER). */
const CLUSTER_ROUND: RoundSpec | undefined = process.env.BENCH_SKIP_CLUSTER
  ? undefined
  : (parseRoundSpecs(process.env.BENCH_CLUSTER_ROUND ?? '')[0] ?? { streams: 100, rate: 50 });
const sameRound = (a: RoundSpec, b: RoundSpec | undefined) => b !== undefined && a.streams === b.streams && a.rate === b.rate;
const CANCEL_ACTIVE_RUNS = 100;
const CANCEL_SPACING_MS = 10;
/** REST cancels sent at once while as many runs stream at CANCEL_BURST_RATE chunks/s. */
const CANCEL_BURST = Math.max(0, Number(process.env.BENCH_CANCEL_BURST ?? 100) || 0);
const CANCEL_BURST_RATE = 50;
const CANCEL_BURST_TARGET_P99_MS = 200;
/** Runs of one short chunk each, for CPU ms per run. */
const PER_RUN = Math.max(0, Number(process.env.BENCH_PER_RUN ?? 500) || 0);
const PER_RUN_MESSAGE = '[[chunks:1]]';
const PER_RUN_STAGGER_MS = 2_000;
/** Worker kills for the takeover figure; each waits at most TAKEOVER_GIVE_UP_MS for the run to continue. */
const KILLS = Math.max(0, Number(process.env.BENCH_KILLS ?? 20) || 0);
const TAKEOVER_GIVE_UP_MS = 90_000;
const TAKEOVER_TARGET_MS = 5_000;
/** Worker processes: two, one per core of the reference machine. */
const WORKERS = Math.max(1, Number(process.env.BENCH_WORKERS ?? 2));
/** Gateway processes (DATAAGENT_WORKERS of the gateway): one, or a cluster primary and that many. */
const GATEWAY_PROCESSES = Math.max(1, Number(process.env.BENCH_GATEWAY_PROCESSES ?? 1) || 1);
/** The main stack's worker slots (and the cluster stack's): more than any round's streams, so no run waits for a slot. */
const WORKER_CONCURRENCY = Math.max(1_100, PER_RUN + 100, CANCEL_BURST + 100, ...[...ROUNDS, ...(CLUSTER_ROUND ? [CLUSTER_ROUND] : [])].map((r) => r.streams + 100));
const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROFILE_DIR ? path.resolve(process.env.BENCH_CPU_PROFILE_DIR) : undefined;
/** The profiles summarised at the end: DataAgent's gateway and workers, and the bare relay's two processes. */
const PROFILED_ROLES = ['gateway', 'worker', ...Array.from({ length: WORKERS - 1 }, (_, i) => `worker-${i + 2}`), 'relay-gateway', 'relay-worker'];
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
  const socketIo = await measureSocketIoFloor({ clients: 100, eventsPerClient: 20, warmupPerClient: 2, intervalMs: 100 });
  log('floor: Socket.IO server CPU per emit, 100 clients at 50/s');
  const emits = await measureSocketIoFloor({ clients: 100, eventsPerClient: 50 * STREAM_SECONDS, warmupPerClient: 0, intervalMs: 20 });
  const pace = `n=${FLOOR_PACE.total}, bursts of ${FLOOR_PACE.burst} every ${FLOOR_PACE.everyMs} ms`;
  const perEmitUs = (r: typeof emits) => (r.serverCpuSeconds * 1e6) / r.emitted;
  return [
    { name: 'BullMQ queue.add → Worker processor', how: `${pace}, worker concurrency 50, in-process`, latency: summarize(bullmq) },
    { name: 'Redis PUBLISH → subscriber (ioredis)', how: `${pace}, event-sized JSON, in-process`, latency: summarize(pubsub) },
    {
      name: 'Socket.IO emit → client receive',
      how: `100 clients × 20 events at 10/s, plain server in a child process; CPU over ${socketIo.emitted} emits`,
      latency: summarize(socketIo.latencyMs),
      cpuUsPerEvent: perEmitUs(socketIo),
    },
    {
      name: 'Socket.IO emits, server CPU',
      how: `100 clients × ${50 * STREAM_SECONDS} events at 50/s, same server; its process CPU / ${emits.emitted} emits`,
      latency: summarize(emits.latencyMs),
      cpuUsPerEvent: perEmitUs(emits),
    },
  ];
}

/** The CPU profiles' window of the per-run measurement: its "events" are runs. */
const PER_RUN_WINDOW = 'per run';

/**
 * CPU ms per run: PER_RUN one-chunk runs; the CPU window opens at the first chat (not while sockets connect).
 * @param onWindow Told the window's bounds and the runs in it (for the CPU profiles' summary of a run's fixed cost).
 */
async function runPerRunCpu(stack: BenchStack, onWindow?: (window: ProfileWindow) => void): Promise<PerRunCpuFigures> {
  const cpu = new CpuMeter(stack.pids, stack.cpuTrees);
  let fromUs = 0;
  const result = await runChatLoad({
    url: stack.gateway.url,
    apiKey: BENCH_API_KEY,
    sessions: PER_RUN,
    message: PER_RUN_MESSAGE,
    staggerMs: PER_RUN_STAGGER_MS,
    timeoutMs: 60_000,
    lingerMs: SETTLE_MS,
    onFirstEmit: () => {
      fromUs = monotonicUs();
      cpu.start();
    },
  });
  const cpuUse = cpu.stop();
  const cpuSeconds = Object.fromEntries(Object.entries(cpuUse).map(([role, use]) => [role === 'llm server' ? 'llm' : role.replace(' ', '-'), use.seconds]));
  onWindow?.({ label: PER_RUN_WINDOW, fromUs, toUs: monotonicUs(), events: PER_RUN, cpuSeconds });
  return {
    runs: PER_RUN,
    message: PER_RUN_MESSAGE,
    staggerMs: PER_RUN_STAGGER_MS,
    completed: result.completed,
    failed: result.failed,
    gapped: result.gapped,
    failedOrGapped: result.failedOrGapped,
    runStarted: summarize(result.runStartedMs),
    windowSeconds: (result.wallMs + SETTLE_MS) / 1000,
    cpuMsPerRun: cpuSplit(cpuUse, PER_RUN, 1e3),
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
  // The cluster round's stack starts after the main teardown ran (a Teardown runs once): a teardown of its own.
  const clusterTeardown = new Teardown();
  const interrupt = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping everything`);
    void Promise.all([teardown.runAll(log), clusterTeardown.runAll(log)]).then(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);

  const report: BenchReport = {
    startedAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown', node: process.version },
    workload: { streamSeconds: STREAM_SECONDS, staggerMs: STAGGER_MS, warmupSessions: WARMUP_SESSIONS, warmupMessage: streamMessage(10), gatewayProcesses: GATEWAY_PROCESSES },
    clockOffset: { offsetMs: NaN, rttMs: NaN },
    floors: [],
    rounds: [],
    targets: [],
  };
  let exitCode = 0;
  /** The single Redis's side of the cluster comparison, measured on the main stack. */
  let singleForCluster: ClusterFigures['single'];
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
  if (!process.env.BENCH_SKIP_PARKED) {
    // Two small stacks of its own, stopped before the main one starts.
    try {
      report.parked = await measureParked(teardown, log);
    } catch (err) {
      exitCode = 1;
      log(`parked-runs bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    }
  }
  try {
    const stack = await startBenchStack(teardown, {
      workerConcurrency: WORKER_CONCURRENCY,
      workers: WORKERS,
      gatewayProcesses: GATEWAY_PROCESSES,
      cpuProfileDir: CPU_PROFILE_DIR,
      log,
    });
    report.clockOffset = await measureClockOffset();
    if (!process.env.BENCH_SKIP_FLOORS) report.floors = await measureFloors(stack);

    const dataAgent: RoundTarget = { url: stack.gateway.url, pids: stack.pids, cpuTrees: stack.cpuTrees, profileName: (role) => (role === 'llm server' ? 'llm' : role.replace(' ', '-')) };
    let relay: RoundTarget | undefined;
    if (!process.env.BENCH_SKIP_RELAY && ROUNDS.length > 0) {
      const bare = await startBareRelay(teardown, { redisUrl: stack.redis.url, llmBaseUrl: stack.llm.baseUrl, profileEnv: (role) => cpuProfileEnv(CPU_PROFILE_DIR, role) });
      // The same bystanders as DataAgent's rounds (LLM server, Redis, MariaDB, bench clients); gateway and workers are the relay's.
      const bystanders = Object.fromEntries(Object.entries(stack.pids).filter(([role]) => role !== 'gateway' && !role.startsWith('worker')));
      relay = { url: bare.url, pids: { ...bare.pids, ...bystanders }, cpuTrees: [], profileName: (role) => (role in bare.pids ? `relay-${role}` : role) };
      log(`bare relay ${bare.url} (gateway pid ${bare.pids.gateway}, worker pid ${bare.pids.worker})`);
    }

    log(`warm-up: ${WARMUP_SESSIONS} sessions`);
    for (const target of relay ? [dataAgent, relay] : [dataAgent]) await warmUp(target);
    const windows: Record<string, ProfileWindow[]> = { dataagent: [], relay: [] };
    const singleRedis = [{ port: stack.redis.port, slots: [] as Array<[number, number]> }];
    for (const round of ROUNDS) {
      // Each round's own CPU window ends SETTLE_MS after its last done: the next starts on a settled stack.
      log(`round ${round.streams}×${round.rate}/s: ${round.streams} streams × ${round.rate} chunks/s for ${STREAM_SECONDS} s`);
      if (sameRound(round, CLUSTER_ROUND) && !singleForCluster) {
        // The single Redis's side of the cluster comparison: this round, with Redis's INFO read around it.
        const { others: _none, ...side } = await measureRedisRound(dataAgent, singleRedis, round, [], (w) => windows.dataagent!.push(w));
        singleForCluster = { ...side, source: `the main stack's ${roundLabel({ sessions: round.streams, rate: round.rate })} round above` };
        report.rounds.push(side.round);
      } else {
        report.rounds.push(await runRound(dataAgent, round, (w) => windows.dataagent!.push(w)));
      }
      if (relay) {
        log(`round ${round.streams}×${round.rate}/s on the bare relay`);
        (report.relayRounds ??= []).push(await runRound(relay, round, (w) => windows.relay!.push(w)));
      }
    }
    if (CLUSTER_ROUND && !singleForCluster) {
      // Not among BENCH_ROUNDS: run once more for the comparison, not shown among the rounds (nor in the profiles' windows).
      const label = roundLabel({ sessions: CLUSTER_ROUND.streams, rate: CLUSTER_ROUND.rate });
      log(`round ${label} on the main stack, for the cluster comparison`);
      const { others: _none, ...side } = await measureRedisRound(dataAgent, singleRedis, CLUSTER_ROUND);
      singleForCluster = { ...side, source: `a ${label} round on the main stack after its rounds (not among them)` };
      await sleep(SETTLE_MS);
    }
    if (PER_RUN > 0) {
      log(`CPU per run: ${PER_RUN} runs "${PER_RUN_MESSAGE}" over ${PER_RUN_STAGGER_MS} ms`);
      report.perRunCpu = await runPerRunCpu(stack, (w) => windows.dataagent!.push(w));
      await sleep(SETTLE_MS);
    }
    if (CPU_PROFILE_DIR) await writeProfileWindows(CPU_PROFILE_DIR, windows);
    if (!process.env.BENCH_SKIP_CANCEL) {
      log(`cancel → done, spaced over Socket.IO, with ${CANCEL_ACTIVE_RUNS} active runs`);
      const cancel = await measureCancelLatency({ url: stack.gateway.url, apiKey: BENCH_API_KEY, activeRuns: CANCEL_ACTIVE_RUNS, spacingMs: CANCEL_SPACING_MS });
      report.cancel = { activeRuns: CANCEL_ACTIVE_RUNS, spacingMs: CANCEL_SPACING_MS, latency: summarize(cancel.latencyMs), cancelled: cancel.cancelled, notCancelled: cancel.notCancelled };
      if (CANCEL_BURST > 0) {
        await sleep(SETTLE_MS);
        const message = streamMessage(CANCEL_BURST_RATE, 60); // outlasts the burst
        log(`cancel burst: ${CANCEL_BURST} REST cancels at once, ${CANCEL_BURST} runs at ${CANCEL_BURST_RATE}/s`);
        const burst = await measureCancelBurst({ url: stack.gateway.url, apiKey: BENCH_API_KEY, runs: CANCEL_BURST, message, timeoutMs: 30_000 });
        report.cancelBurst = {
          runs: CANCEL_BURST,
          message,
          latency: summarize(burst.latencyMs),
          rest: summarize(burst.restMs),
          cancelled: burst.cancelled,
          notCancelled: burst.notCancelled,
          noDone: burst.noDone,
          refused: burst.refused,
          gaps: burst.gaps,
          targetP99Ms: CANCEL_BURST_TARGET_P99_MS,
          seedMs: 1_000,
        };
      }
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
  if (CLUSTER_ROUND) {
    // Its own stack on a Redis Cluster, once the main stack has stopped, so the CPU figures do not mix.
    try {
      report.cluster = await measureClusterRound(clusterTeardown, {
        round: CLUSTER_ROUND,
        workers: WORKERS,
        workerConcurrency: WORKER_CONCURRENCY,
        gatewayProcesses: GATEWAY_PROCESSES,
        single: singleForCluster,
        log,
      });
    } catch (err) {
      exitCode = 1;
      log(`cluster round failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    } finally {
      await clusterTeardown.runAll(log);
    }
  }

  if (CPU_PROFILE_DIR && report.rounds.length > 0) {
    // The processes wrote their profiles as they stopped.
    try {
      report.cpuProfiles = await summarizeProfileDir(CPU_PROFILE_DIR, 12, PROFILED_ROLES, report.rounds.map((r) => roundLabel({ sessions: r.sessions, rate: r.rate })));
      if (report.perRunCpu) report.cpuProfilesPerRun = await summarizeProfileDir(CPU_PROFILE_DIR, 12, PROFILED_ROLES.filter((role) => !role.startsWith('relay')), [PER_RUN_WINDOW]);
    } catch (err) {
      log(`CPU profile summary failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  report.targets = checkTargets(report);
  if (report.rounds.length > 0 || report.floors.length > 0) console.log(`\n${formatReport(report)}\n`);
  if (report.cancel || report.cancelBurst) console.log(`${formatCancel(report)}\n`);
  if (report.cpuProfiles?.length) {
    console.log(
      `Where the CPU went in the streaming rounds (V8 CPU profiles in ${CPU_PROFILE_DIR}, bench/cpu-profile-summary.ts): each row's share of the samples ` +
        "within the rounds' windows, and that share of the process's CPU per event as /proc measured it in those windows (profiler included):\n",
    );
    console.log(`${report.cpuProfiles.map(formatProfileSummary).join('\n\n')}\n`);
  }
  if (report.cpuProfilesPerRun?.length) {
    console.log(`Where a run's fixed cost went (the same profiles within the window of the ${report.perRunCpu?.runs} one-chunk runs; each "event" below is one run):\n`);
    console.log(`${report.cpuProfilesPerRun.map(formatProfileSummary).join('\n\n')}\n`);
  }
  if (report.takeover) console.log(`${formatTakeover(report.takeover)}\n`);
  if (report.mcp) console.log(`${formatMcp(report.mcp)}\n`);
  if (report.fairness) console.log(`${formatFairness(report.fairness)}\n`);
  if (report.parked) console.log(`${formatParked(report.parked)}\n`);
  if (report.cluster) console.log(`${formatCluster(report.cluster)}\n`);
  if (!process.env.BENCH_SKIP_TOKENS) {
    try {
      report.tokens = await measureTokens();
      console.log(`${formatTokens(report.tokens)}\n`);
    } catch (err) {
      exitCode = 1;
      log(`token bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    }
  }
  if (!process.env.BENCH_SKIP_SANDBOX) {
    try {
      log('sandbox start: bubblewrap vs a plain child');
      console.log(`${formatSandboxBench(await runSandboxBench())}\n`);
    } catch (err) {
      exitCode = 1;
      log(`sandbox bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    }
  }
  if (!process.env.BENCH_SKIP_LLM_STREAM) {
    try {
      log('LLM stream read: SDK stream, SseChunkReader, OpenAIChatModel');
      report.llmStream = await runLlmStreamBench();
      console.log(`${formatLlmStreamBench(report.llmStream)}\n`);
    } catch (err) {
      exitCode = 1;
      log(`LLM stream bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
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
