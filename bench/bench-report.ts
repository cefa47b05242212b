import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CPU_TARGET_US_PER_EVENT, hopFloors, RELAY_RATIO_TARGET, relayRoundOf, roundLabel } from './bench-targets.js';
import type { ClockOffset } from './clock-offset.js';
import type { ClusterFigures } from './cluster-round.js';
import type { FairnessFigures } from './fairness.js';
import type { ParkedFigures } from './parked-bench.js';
import type { McpFigures } from './mcp-bench.js';
import type { LlmStreamBenchResult } from './llm-stream-bench.js';
import type { TokenFigures } from './token-bench.js';
import { summarize, type LatencySummary } from './percentiles.js';
import type { ProfileSummary } from './cpu-profile-summary.js';
import type { CpuUse } from './process-cpu.js';
import type { TakeoverSample } from './takeover.js';

export interface FloorFigure {
  name: string;
  how: string;
  latency: LatencySummary;
  /** The Socket.IO floor server's own CPU per emitted event, µs (its process CPU time / events emitted). */
  cpuUsPerEvent?: number;
}

/** CPU per delivered event, µs: gateway, the workers summed, and both. */
export interface CpuPerEvent {
  gateway: number;
  workers: number;
  total: number;
}

export interface RoundFigures {
  /** Streams (one socket and one run each). */
  sessions: number;
  /** Text chunks per second per stream. */
  rate: number;
  chunks: number;
  message: string;
  completed: number;
  failed: number;
  failures: Record<string, number>;
  runStarted: LatencySummary;
  perEventOverhead: LatencySummary;
  ack: LatencySummary;
  emitToQueued: LatencySummary;
  emitToWorkerStart: LatencySummary;
  llmToWorker: LatencySummary;
  workerToClient: LatencySummary;
  connectMs: number;
  wallMs: number;
  clientLoopDelayMs: { p50: number; p99: number; max: number };
  /** Every event the clients received, of every type. */
  eventsReceived: number;
  /** Text events carrying at least one stamped chunk (fewer than the chunks when text coalescing merges them). */
  stampedTextEvents: number;
  /** eventsReceived / wall time (first chat sent → last run settled). */
  eventsPerSecond: number;
  /** Runs whose events broke seq 1..n, one done, nothing after it (bench/run-check.ts), by first problem. */
  gapped: number;
  gaps: Record<string, number>;
  failedOrGapped: number;
  /** Per process while the round ran (connect, stream, and the settle time after): % of one core, CPU seconds. */
  cpu: Record<string, CpuUse>;
  /** CPU seconds of the round / eventsReceived. */
  cpuPerEventUs: CpuPerEvent;
}

/** CPU per run: many runs each answering one short chunk (submit, start, stream one chunk, done, archive). */
export interface PerRunCpuFigures {
  runs: number;
  message: string;
  staggerMs: number;
  completed: number;
  failed: number;
  gapped: number;
  failedOrGapped: number;
  runStarted: LatencySummary;
  /** The CPU window: first chat sent → last run settled + settle time, s. */
  windowSeconds: number;
  cpuMsPerRun: CpuPerEvent;
  cpu: Record<string, CpuUse>;
}

/** REST cancels sent all at once while the runs stream (bench/cancel-burst.ts). */
export interface CancelBurstFigures {
  runs: number;
  message: string;
  /** Client sends the REST cancel → that run's done{cancelled} on its socket, ms. */
  latency: LatencySummary;
  /** The REST answer's round trip, ms. */
  rest: LatencySummary;
  cancelled: number;
  notCancelled: number;
  noDone: number;
  refused: Record<string, number>;
  gaps: Record<string, number>;
  targetP99Ms: number;
  seedMs: number;
}

/** One line of the issue's targets table, beside the floor of the same run. */
export interface TargetCheck {
  figure: string;
  target: string;
  measured: string;
  floor: string;
  /** Undefined when the figure was not measured in this run. */
  met?: boolean;
}

/** Everything one run measured; written as JSON and printed as tables. */
export interface BenchReport {
  startedAt: string;
  machine: { cpus: number; cpuModel: string; node: string };
  /** `gatewayProcesses`: the gateway's DATAAGENT_WORKERS (reports written before it had none: one). */
  workload: { streamSeconds: number; staggerMs: number; warmupSessions: number; warmupMessage: string; gatewayProcesses?: number };
  clockOffset: ClockOffset;
  floors: FloorFigure[];
  rounds: RoundFigures[];
  /** The same rounds on the bare relay of the same hops (bare-relay.ts), each right after DataAgent's; its `gateway` and `worker` are the relay's. */
  relayRounds?: RoundFigures[];
  targets: TargetCheck[];
  /** Where gateway's and workers' CPU went in the streaming rounds (BENCH_CPU_PROFILE_DIR; cpu-profile-summary.ts). */
  cpuProfiles?: ProfileSummary[];
  /** The same profiles within the per-run window (`events` there are runs). */
  cpuProfilesPerRun?: ProfileSummary[];
  parserBench?: unknown;
  /** Client CPU per chunk reading streamed completions (llm-stream-bench.ts). */
  llmStream?: LlmStreamBenchResult;
  /** MCP prompt tokens per turn (token-bench.ts). */
  tokens?: TokenFigures;
  /** Spaced cancels over Socket.IO → done at the client, with that many runs streaming when the cancels start. */
  cancel?: { activeRuns: number; spacingMs: number; latency: LatencySummary; cancelled: number; notCancelled: number };
  /** A burst of REST cancels sent at once while the runs stream. */
  cancelBurst?: CancelBurstFigures;
  /** CPU ms per run. */
  perRunCpu?: PerRunCpuFigures;
  /**
   * kill -9 of the worker holding a run → the run continuing on another worker (at the client),
   * over `kills` kills; `latency` covers the continued ones, timeouts are counted apart (the printed p50 and max count them as longer than `giveUpMs`).
   */
  takeover?: TakeoverFigures;
  /** MCP tool calls through the worker's pool beside the bare SDK client (bench/mcp-bench.ts). */
  mcp?: McpFigures;
  /** Tenant B's request → run_started while tenant A floods, with and without the tenant run limit (bench/fairness.ts). */
  fairness?: FairnessFigures;
  /** Runs waiting for a person beside another user's chats (parked-bench.ts). */
  parked?: ParkedFigures;
  /** The same streaming round on the single Redis and on a Redis Cluster of 3 masters, with each master's share of the work (cluster-round.ts). */
  cluster?: ClusterFigures;
  durationSeconds?: number;
}

export interface TakeoverFigures {
  kills: number;
  /** Worker processes up when each kill is made. */
  workers: number;
  workload: string;
  targetMs: number;
  giveUpMs: number;
  latency: LatencySummary;
  continued: number;
  timedOut: number;
  /** Runs that ended (done) after the kill without any worker continuing them. */
  ended: number;
  completedAfterTakeover: number;
  met: boolean;
  samples: TakeoverSample[];
}

/** The takeover figure as the lines the bench prints. */
export function formatTakeover(t: TakeoverFigures): string {
  const s = (value: number) => (value === Infinity ? `> ${t.giveUpMs / 1000} s` : Number.isFinite(value) ? `${(value / 1000).toFixed(2)} s` : '–');
  const missed = t.timedOut + t.ended;
  // A timeout counts as longer than the give-up time; a run that ended without a takeover has no figure.
  const withTimeouts = summarize(t.samples.flatMap((x) => (x.outcome === 'continued' ? [x.ms!] : x.outcome === 'timeout' ? [Infinity] : [])));
  const [p50, max] = [withTimeouts.p50, withTimeouts.max];
  const others = [t.timedOut > 0 ? `${t.timedOut} timed out (no continuation within ${t.giveUpMs / 1000} s)` : '', t.ended > 0 ? `${t.ended} ended without a takeover` : '']
    .filter(Boolean)
    .join(', ');
  return (
    `Worker kill → run continues (kill -9 of the worker holding a run → the client receives the first event of that run from another worker), ` +
    `${t.kills} kills, ${t.workers} workers up at each kill, each run "${t.workload}":\n` +
    `  p50 ${s(p50)}   max ${s(max)}   (${t.continued} of ${t.kills} continued${others ? `; ${others}` : ''}; ${t.completedAfterTakeover} then reached done)\n` +
    `  target ≤ ${t.targetMs / 1000} s: ${t.met ? 'met' : 'NOT MET'}   (for scale: BullMQ's default lock is 30 s, LangGraph's takeover up to 2 min)` +
    (missed > 0 && t.continued === 0 ? '\n  (no kill continued: p50 and max have no samples)' : '')
  );
}

const ms = (value: number, width = 8) => (Number.isFinite(value) ? value.toFixed(value < 10 ? 2 : 1) : '–').padStart(width);
const num = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const counts = (record: Record<string, number>) => Object.entries(record).map(([k, v]) => `${k}×${v}`).join(', ');

/** The run's figures as the tables the bench prints. */
export function formatReport(report: BenchReport): string {
  const { workload } = report;
  const lines: string[] = [];
  lines.push(`DataAgent latency bench — ${report.machine.cpus} CPUs (${report.machine.cpuModel}), Node ${report.machine.node}, ${report.startedAt}`);
  const gatewayProcesses = workload.gatewayProcesses ?? 1;
  lines.push(
    gatewayProcesses === 1
      ? 'Gateway: one process (BENCH_GATEWAY_PROCESSES=1).'
      : `Gateway: ${gatewayProcesses} processes on one port under a cluster primary (BENCH_GATEWAY_PROCESSES=${gatewayProcesses}); its CPU counts the primary and every process.`,
  );
  lines.push(
    `Workload: a round is (streams × chunks per second): each stream one socket and one chat "[[stamp]] [[chunks:rate×${workload.streamSeconds}]] [[slow:1000/rate]]", ` +
      `stamped text chunks from the scripted LLM server (separate process) for about ${workload.streamSeconds} s. All sockets connect before the first chat; ` +
      `the chats are staggered evenly over ${workload.staggerMs} ms so the streams are not phase-locked. A ${workload.warmupSessions}-session warm-up round ` +
      `("${workload.warmupMessage}") ran first and is not shown. Per-event overhead is timed per chunk, from its own stamp (a coalesced text event ` +
      `carries several). Gapped: a run whose events broke seq 1..n, exactly one done, nothing after it.`,
  );
  lines.push('');
  lines.push('      round | events/s | req→run_started ms | per-event overhead ms | runs done / failed | gapped | chunks / text events');
  lines.push('            |          |      p50      p99  |      p50      p99     |                    |        |');
  for (const r of report.rounds) {
    const failures = counts(r.failures);
    const gaps = counts(r.gaps);
    lines.push(
      `${roundLabel(r).padStart(11)} | ${num(r.eventsPerSecond).padStart(8)} | ${ms(r.runStarted.p50)} ${ms(r.runStarted.p99)}  | ${ms(r.perEventOverhead.p50)} ${ms(r.perEventOverhead.p99)}     | ` +
        `${`${r.completed} / ${r.failed}`.padStart(18)} | ${String(r.gapped).padStart(6)} | ${`${r.perEventOverhead.count} / ${r.stampedTextEvents}`.padStart(20)}` +
        `${failures ? `  (failed: ${failures})` : ''}${gaps ? `  (gapped: ${gaps})` : ''}`,
    );
  }
  const floors = hopFloors(report);
  if (floors.start && floors.event) {
    lines.push(
      `${'floor'.padStart(11)} |          | ${ms(floors.start.p50)} ${ms(floors.start.p99)}  | ${ms(floors.event.p50)} ${ms(floors.event.p99)}     |   (sum of the hop floors below)`,
    );
  }
  lines.push('');
  lines.push('Floors, same run, same clock (sender stamps performance.timeOrigin+now(), receiver subtracts it from its own):');
  for (const f of report.floors) {
    const latency = f.latency.count > 0 ? `p50 ${ms(f.latency.p50, 6)} ms   p99 ${ms(f.latency.p99, 6)} ms   ` : '';
    const cpu = f.cpuUsPerEvent !== undefined ? `server CPU ${num(f.cpuUsPerEvent, 1)} µs per emit   ` : '';
    lines.push(`  ${f.name.padEnd(38)} ${latency}${cpu}(${f.how})`);
  }
  lines.push(
    `  cross-process clock offset ${report.clockOffset.offsetMs.toFixed(3)} ms (probe round trip ${report.clockOffset.rttMs.toFixed(3)} ms): ` +
      `(a cross-process figure may be off by up to ${(Math.abs(report.clockOffset.offsetMs) + report.clockOffset.rttMs / 2).toFixed(3)} ms)`,
  );
  if (report.rounds.length > 0) {
    lines.push('');
    lines.push(
      'CPU per delivered event, µs (process CPU time of the whole round: sockets connecting, streaming, and 1 s after the last done for archive writes; ' +
        'delivered = every event of every type the bench clients received):',
    );
    lines.push(`      round | delivered events |  gateway |  workers | gateway+workers | target ≤ ${CPU_TARGET_US_PER_EVENT}`);
    for (const r of report.rounds) {
      const c = r.cpuPerEventUs;
      lines.push(
        `${roundLabel(r).padStart(11)} | ${String(r.eventsReceived).padStart(16)} | ${num(c.gateway, 1).padStart(8)} | ${num(c.workers, 1).padStart(8)} | ${num(c.total, 1).padStart(15)} | ` +
          `${c.total <= CPU_TARGET_US_PER_EVENT ? 'met' : 'NOT MET'}`,
      );
    }
    if (floors.socketIoCpuUs !== undefined) lines.push(`${'floor'.padStart(11)} |                  | ${num(floors.socketIoCpuUs, 1).padStart(8)} |          |                 |   (a bare Socket.IO server's CPU per emit)`);
  }
  if (report.relayRounds && report.relayRounds.length > 0) {
    lines.push('');
    lines.push(
      'CPU per delivered event, µs, DataAgent beside a bare relay of the same hops, measured the same way in the same run, each relay round right after DataAgent\'s ' +
        '(bare relay: a Socket.IO server fed by Redis pub/sub, and a process that streams the same LLM server\'s SSE and PUBLISHes each chunk; no queue, log, auth or storage):',
    );
    lines.push(`      round | DataAgent: events  gateway  workers    both | bare relay: events  gateway   worker    both | ratio: gateway  workers    both | target both ≤ ${RELAY_RATIO_TARGET}×`);
    for (const r of report.rounds) {
      const relay = relayRoundOf(report, r);
      if (!relay) continue;
      const [c, b] = [r.cpuPerEventUs, relay.cpuPerEventUs];
      const ratio = (x: number, y: number) => `${num(x / y, 2)}×`.padStart(8);
      const failed = relay.failedOrGapped > 0 ? `   (bare relay: ${relay.failedOrGapped} runs failed or gapped)` : '';
      lines.push(
        `${roundLabel(r).padStart(11)} | ${String(r.eventsReceived).padStart(17)} ${num(c.gateway, 1).padStart(8)} ${num(c.workers, 1).padStart(8)} ${num(c.total, 1).padStart(7)} | ` +
          `${String(relay.eventsReceived).padStart(18)} ${num(b.gateway, 1).padStart(8)} ${num(b.workers, 1).padStart(8)} ${num(b.total, 1).padStart(7)} | ` +
          `${ratio(c.gateway, b.gateway).padStart(14)} ${ratio(c.workers, b.workers)} ${ratio(c.total, b.total)} | ${c.total / b.total <= RELAY_RATIO_TARGET ? 'met' : 'NOT MET'}${failed}`,
      );
    }
    lines.push(
      '  The same per LLM chunk delivered (CPU / stamped chunks the clients received): DataAgent coalesces chunks into fewer text events when it falls behind ' +
        '(DATAAGENT_TEXT_COALESCE_MS), the bare relay never does, so per event alone flatters the relay when chunks / text events (first table) drops:',
    );
    lines.push('      round | DataAgent: chunks  µs/chunk | bare relay: chunks  µs/chunk | ratio');
    for (const r of report.rounds) {
      const relay = relayRoundOf(report, r);
      if (!relay) continue;
      const perChunk = (x: RoundFigures) => (x.cpuPerEventUs.total * x.eventsReceived) / x.perEventOverhead.count;
      lines.push(
        `${roundLabel(r).padStart(11)} | ${String(r.perEventOverhead.count).padStart(17)} ${num(perChunk(r), 1).padStart(9)} | ` +
          `${String(relay.perEventOverhead.count).padStart(18)} ${num(perChunk(relay), 1).padStart(9)} | ${num(perChunk(r) / perChunk(relay), 2)}×`,
      );
    }
    lines.push('            (bare relay per-event overhead p50 / p99 ms, and req→run_started p99 ms, for scale: ' +
      report.relayRounds.map((r) => `${roundLabel(r)} ${num(r.perEventOverhead.p50, 2)} / ${num(r.perEventOverhead.p99, 2)}, ${num(r.runStarted.p99, 1)}`).join('; ') + ')');
  }
  if (report.perRunCpu) {
    const p = report.perRunCpu;
    lines.push('');
    lines.push(
      `CPU per run (submit, start, one chunk, done, archive): ${p.runs} runs "${p.message}" staggered over ${p.staggerMs} ms, ` +
        `CPU from the first chat to 1 s after the last done (${num(p.windowSeconds, 1)} s):`,
    );
    lines.push(
      `  gateway ${num(p.cpuMsPerRun.gateway, 2)} ms + workers ${num(p.cpuMsPerRun.workers, 2)} ms = ${num(p.cpuMsPerRun.total, 2)} ms per run   ` +
        `(${p.completed} done, ${p.failed} failed, ${p.gapped} gapped; req→run_started p50 ${num(p.runStarted.p50, 1)} ms, p99 ${num(p.runStarted.p99, 1)} ms)`,
    );
  }
  lines.push('');
  lines.push(`Targets (issue 14, for the 2-core reference machine; this one has ${report.machine.cpus} CPUs), each beside the floor of this run:`);
  const width = Math.max(...report.targets.map((t) => t.figure.length), 10);
  const targetWidth = Math.max(...report.targets.map((t) => t.target.length), 10);
  const measuredWidth = Math.max(...report.targets.map((t) => t.measured.length), 10);
  for (const t of report.targets) {
    const verdict = t.met === undefined ? 'not measured' : t.met ? 'met' : 'NOT MET';
    lines.push(`  ${t.figure.padEnd(width)} | ${t.target.padEnd(targetWidth)} | ${t.measured.padEnd(measuredWidth)} | ${verdict.padEnd(12)} | floor ${t.floor}`);
  }
  lines.push('');
  lines.push('Where the time goes (worker-side `timestamp` of events is Date.now(), ms resolution, truncated: splits are ±1 ms):');
  lines.push('      round |  ack (submitted) | emit→run_queued | emit→worker run_started | LLM stamp→worker event | worker event→client | client loop lag  | wall');
  lines.push('            |      p50     p99 |     p50     p99 |          p50        p99 |          p50       p99 |        p50      p99 |          p99  max |    s');
  for (const r of report.rounds) {
    lines.push(
      `${roundLabel(r).padStart(11)} | ${ms(r.ack.p50)}${ms(r.ack.p99)} |${ms(r.emitToQueued.p50)}${ms(r.emitToQueued.p99)} |     ${ms(r.emitToWorkerStart.p50)}   ${ms(r.emitToWorkerStart.p99)} |     ${ms(r.llmToWorker.p50)}  ${ms(r.llmToWorker.p99)} |   ${ms(r.workerToClient.p50)} ${ms(r.workerToClient.p99)} | ` +
        `${ms(r.clientLoopDelayMs.p99, 12)} ${ms(r.clientLoopDelayMs.max, 4)} | ${(r.wallMs / 1000).toFixed(1).padStart(4)}`,
    );
  }
  const roles = Object.keys(report.rounds[0]?.cpu ?? {});
  if (roles.length > 0) {
    lines.push('');
    lines.push(`CPU while each round ran, % of one core, average / busiest second (${report.machine.cpus * 100} % = the whole machine):`);
    lines.push(`      round | ${roles.map((role) => role.padStart(13)).join(' ')}`);
    for (const r of report.rounds) {
      const cell = (role: string) => `${(r.cpu[role]?.average ?? NaN).toFixed(0)} / ${(r.cpu[role]?.peak ?? NaN).toFixed(0)}`.padStart(13);
      lines.push(`${roundLabel(r).padStart(11)} | ${roles.map(cell).join(' ')}`);
    }
  }
  return lines.join('\n');
}

/** The cancel figures (spaced over Socket.IO, and the REST burst) as the lines the bench prints. */
export function formatCancel(report: BenchReport): string {
  const lines: string[] = [];
  if (report.cancel) {
    const { latency, activeRuns, spacingMs, cancelled, notCancelled } = report.cancel;
    lines.push(
      `Cancel → done, spaced (client sends cancel over Socket.IO → receives done{cancelled}), ${activeRuns} runs streaming at 10/s, one cancel every ${spacingMs} ms:`,
      `  p50 ${ms(latency.p50, 0)} ms   p99 ${ms(latency.p99, 0)} ms   max ${ms(latency.max, 0)} ms   (${cancelled} cancelled, ${notCancelled} not)   ` +
        `seed ≤ 1000 ms: ${latency.max <= 1000 ? 'met' : 'NOT MET'}`,
    );
  }
  const b = report.cancelBurst;
  if (b) {
    const floor = hopFloors(report).cancel;
    const others = [
      b.notCancelled > 0 ? `${b.notCancelled} ended not cancelled` : '',
      b.noDone > 0 ? `${b.noDone} without a done` : '',
      Object.keys(b.refused).length > 0 ? `REST refused: ${counts(b.refused)}` : '',
      Object.keys(b.gaps).length > 0 ? `gapped: ${counts(b.gaps)}` : '',
    ].filter(Boolean);
    lines.push(
      `Cancel burst (client sends POST /api/v1/chat/{session_id}/cancel → that run's done{cancelled} on its socket), ${b.runs} runs "${b.message}", all ${b.runs} cancels sent at once once every run streamed, each on a keep-alive connection of its own opened beforehand:`,
      `  p50 ${ms(b.latency.p50, 0)} ms   p99 ${ms(b.latency.p99, 0)} ms   max ${ms(b.latency.max, 0)} ms   (${b.cancelled} of ${b.runs} cancelled${others.length ? `; ${others.join('; ')}` : ''}); ` +
        `REST answer p50 ${ms(b.rest.p50, 0)} ms, p99 ${ms(b.rest.p99, 0)} ms`,
      `  target p99 ≤ ${b.targetP99Ms} ms: ${b.latency.p99 <= b.targetP99Ms ? 'met' : 'NOT MET'}   seed ≤ ${b.seedMs} ms: ${b.latency.max <= b.seedMs ? 'met' : 'NOT MET'}` +
        (floor ? `   floor p99 ${ms(floor.p99, 0)} ms (2× Redis pub/sub + Socket.IO)` : ''),
    );
  }
  return lines.join('\n');
}

/** The MCP figures as the lines the bench prints. */
export function formatMcp(m: McpFigures): string {
  const name = (transport: string) => `    ${transport.padEnd(16)}`;
  const signed = (value: number) => `${value >= 0 ? '+' : '−'}${ms(Math.abs(value), 0)}`.padStart(8);
  const lines = [
    `MCP tool calls: in-process McpPool with the worker's defaults (MCP_POOL_DEFAULTS; ${m.pool.maxPerUser} per user, ${m.pool.maxConnections} per worker, ` +
      `${m.pool.attemptsPerMinute} connection attempts a minute per server; outbound check on) beside the bare SDK Client, against ${m.server} on loopback.`,
    `  echo, ${m.calls} sequential calls per side after ${m.warmup} unrecorded, pool and bare alternating (and taking turns going first), ms:`,
    `                         pool p50      p99 |  bare p50      p99 | pool − bare p50      p99 | target ≤ +${m.targetOverheadMs} ms p50`,
  ];
  for (const t of m.transports) {
    const { pool, bare } = t.call;
    const overhead = pool.p50 - bare.p50;
    lines.push(
      `${name(t.transport)}  ${ms(pool.p50)} ${ms(pool.p99)} |  ${ms(bare.p50)} ${ms(bare.p99)} |         ${signed(overhead)} ${signed(pool.p99 - bare.p99)} | ` +
        `${overhead <= m.targetOverheadMs ? 'met' : 'NOT MET'}`,
    );
  }
  lines.push(
    `  A user's first call: acquire (connect, handshake, tools/list) + echo, over ${m.users} users, each a new user scope, after one unrecorded; ` +
      `warm = that user's next run (acquire on the open connection + echo), ms:`,
  );
  lines.push('                         cold p50      p99 |  warm p50      p99 | new users refused with the default breaker');
  for (const t of m.transports) {
    const { cold, warm, refusedWithDefaultBreaker } = t.firstCall;
    lines.push(`${name(t.transport)}  ${ms(cold.p50)} ${ms(cold.p99)} |  ${ms(warm.p50)} ${ms(warm.p99)} | ${refusedWithDefaultBreaker} of ${m.users}`);
  }
  if (m.transports.some((t) => t.firstCall.refusedWithDefaultBreaker > 0)) {
    lines.push(
      `    (cold is timed with the breaker lifted to ${m.users + 1} attempts a minute: at its default of ${m.pool.attemptsPerMinute} it counts successful connections too, ` +
        'across users, so further new users of the same server are refused for the rest of the minute)',
    );
  }
  lines.push(`  Calls per second through one connection, ${m.concurrency} concurrent callers, ${m.seconds} s per side in quarters ordered ABBA BAAB after 1 s each unrecorded; CPU % of one core (average / busiest second):`);
  lines.push('                          pool calls/s   p50 ms   p99 ms | bare calls/s   p50 ms   p99 ms | CPU pool: bench, server | bare: bench, server');
  for (const t of m.transports) {
    const { pool, bare } = t.throughput;
    const cpu = (x: typeof pool) => [x.cpu.bench, x.cpu['mcp server']].map((c) => `${c?.average.toFixed(0)}/${c?.peak.toFixed(0)}`).join(', ').padStart(23);
    const errors = pool.errors + bare.errors > 0 ? `   (errors: pool ${pool.errors}, bare ${bare.errors})` : '';
    lines.push(
      `${name(t.transport)}  ${pool.callsPerSecond.toFixed(0).padStart(12)} ${ms(pool.latency.p50)} ${ms(pool.latency.p99)} | ` +
        `${bare.callsPerSecond.toFixed(0).padStart(12)} ${ms(bare.latency.p50)} ${ms(bare.latency.p99)} | ${cpu(pool)} | ${cpu(bare).trimStart().padStart(18)}${errors}`,
    );
  }
  const warned = m.transports.filter((t) => t.throughput.pool.abortListenerWarnings + t.throughput.bare.abortListenerWarnings > 0);
  for (const t of warned) {
    lines.push(
      `    (${t.transport}: MaxListenersExceededWarning on an AbortSignal ${t.throughput.pool.abortListenerWarnings}× with the pool, ${t.throughput.bare.abortListenerWarnings}× bare, not printed: ` +
        "the SDK's transport gives every fetch its session's one signal and undici drops its listener only at GC)",
    );
  }
  return lines.join('\n');
}

/**
 * The parser bench's figures (bench/parser-bench.ts, owned elsewhere) as a few lines; its result
 * is read defensively because its shape is not this file's to fix.
 */
export function formatParserBench(result: unknown): string {
  const rows = (result as { rows?: Array<{ corpus?: unknown; chunking?: unknown; mbPerSecond?: unknown; toolCalls?: unknown }> })?.rows;
  if (!Array.isArray(rows)) return `Parser bench: ${JSON.stringify(result)}`;
  const lines = ['Parser bench (StreamingToolActionDetector, bench/parser-bench.ts):'];
  for (const row of rows) {
    lines.push(`  ${String(row.corpus).padEnd(18)} ${String(row.chunking).padEnd(11)} ${Number(row.mbPerSecond).toFixed(0).padStart(7)} MB/s   ${row.toolCalls} tool calls`);
  }
  return lines.join('\n');
}

/** Writes the report as JSON (the folder is created when missing). */
export async function writeReportJson(report: BenchReport, file: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
}
