/**
 * The same streaming round on a Redis Cluster (3 masters + 3 replicas, scripts/redis-cluster.mjs)
 * as on the single Redis: a stack of its own whose gateway and workers get
 * DATAAGENT_REDIS_CLUSTER_NODES, warmed up like the main stack, then the round; around it every
 * master's INFO commandstats, cpu and errorstats are read, so the Redis work shows per master
 * (commands, Redis CPU, CROSSSLOT / MOVED / ASK replies) beside the single Redis's of the same
 * round. Figures only: nothing is asserted.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import calculateSlot from 'cluster-key-slot';
import type { Redis } from 'ioredis';
import { queuePrefix } from '#transport/redis-keys.js';
import type { RoundFigures } from './bench-report.js';
import { startBenchStack, type BenchStack } from './bench-stack.js';
import { roundLabel } from './bench-targets.js';
import { loadRedisCluster } from './local-services.js';
import { runRound, streamMessage, STREAM_SECONDS, warmUp, WARMUP_SESSIONS, type RoundSpec, type RoundTarget } from './streaming-round.js';
import { Teardown } from './teardown.js';

const MASTERS = 3;
const REPLICAS_PER_MASTER = 1;
const NODE_TIMEOUT_MS = 1_000;
/** The bench's own reads, left out of the commands counted. */
const OWN_COMMANDS = new Set(['info']);
/** Redirections and cross-slot refusals: each gets a column of its own. */
const SLOT_ERRORS = ['CROSSSLOT', 'MOVED', 'ASK'] as const;

/** One Redis server's work over a round: the deltas of its INFO counters. */
export interface RedisNodeFigures {
  port: number;
  /** The slot ranges it owned (a cluster's master); empty for the single Redis, which holds every key. */
  slots: Array<[number, number]>;
  /** Commands processed: the sum of INFO commandstats `calls` deltas, the bench's own INFO left out. */
  commands: number;
  /** Redis CPU seconds: the used_cpu_sys + used_cpu_user delta of INFO cpu (its main and background threads). */
  cpuSeconds: number;
  /** Error replies by code, INFO errorstats deltas (`CROSSSLOT`, `MOVED`, `ASK`, `NOSCRIPT`, …). */
  errors: Record<string, number>;
  /** Which commands those errors answered: commandstats `failed_calls` + `rejected_calls` deltas, by command. */
  failedCommands: Record<string, number>;
  /** Its busiest commands of the round, most calls first (at most 5). */
  topCommands: Array<{ command: string; calls: number }>;
  /** A master owning the slot of the BullMQ prefix (`{da-queue}`): every key of the run queue is on it. */
  holdsQueue?: boolean;
}

/** A round and the Redis work it caused, on one side of the comparison. */
export interface RedisRoundFigures {
  round: RoundFigures;
  /** The single Redis, or every master of the cluster (by first slot). */
  redis: RedisNodeFigures[];
  /** Summed over `redis`. */
  redisCommands: number;
  redisCpuSeconds: number;
  /** redisCpuSeconds / events the clients received, µs. */
  redisCpuUsPerEvent: number;
}

export interface ClusterFigures {
  streams: number;
  rate: number;
  message: string;
  masters: number;
  replicasPerMaster: number;
  /** The single Redis's side: the main stack's round of the same spec (see run-bench.ts), absent when it did not run. */
  single?: RedisRoundFigures & { source: string };
  cluster: RedisRoundFigures;
  /** Every replica's Redis CPU over the round (INFO cpu delta): the replication stream's cost, not in redisCpuSeconds. */
  replicas: { count: number; cpuSeconds: number };
  /** Milliseconds from starting the cluster to a healthy one. */
  clusterStartedInMs: number;
}

export interface ClusterRoundOptions {
  round: RoundSpec;
  /** Worker processes, as the main stack's. */
  workers: number;
  /** DATAAGENT_WORKER_CONCURRENCY, as the main stack's. */
  workerConcurrency: number;
  /** The gateway's processes (DATAAGENT_WORKERS), as the main stack's; default 1. */
  gatewayProcesses?: number;
  log: (line: string) => void;
  /** The single Redis's side when measured already (run-bench.ts: the main stack's round of the same spec). */
  single?: RedisRoundFigures & { source: string };
  /**
   * Otherwise, a running single-Redis stack, warmed up and idle: the round is run on it first,
   * before the cluster starts, for the single Redis's side.
   */
  singleStack?: BenchStack;
}

/** INFO counters of one server at one moment. */
interface RedisCounters {
  calls: Map<string, number>;
  /** failed_calls + rejected_calls, by command. */
  failed: Map<string, number>;
  cpuSeconds: number;
  errors: Map<string, number>;
}

/**
 * A connection of the bench's own to the server on 127.0.0.1:`port`, opened before the first
 * reading so its handshake (ioredis's CLIENT SETINFO, an ERR on Redis < 7.2) falls outside the round.
 */
async function connectTo(port: number): Promise<Redis> {
  return (await loadRedisCluster()).connectNode(port, 2_000, 5_000);
}

/** INFO commandstats, cpu and errorstats of one server, read in one command. */
async function readCounters(redis: Redis): Promise<RedisCounters> {
  const text = String(await redis.call('INFO', 'commandstats', 'cpu', 'errorstats'));
  const counters: RedisCounters = { calls: new Map(), failed: new Map(), cpuSeconds: 0, errors: new Map() };
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at <= 0 || line.startsWith('#')) continue;
    const [key, value] = [line.slice(0, at), line.slice(at + 1).trim()];
    const field = (name: string) => Number(new RegExp(`(?:^|,)${name}=([^,]*)`).exec(value)?.[1] ?? NaN);
    if (key.startsWith('cmdstat_')) {
      counters.calls.set(key.slice('cmdstat_'.length), field('calls'));
      counters.failed.set(key.slice('cmdstat_'.length), (field('failed_calls') || 0) + (field('rejected_calls') || 0));
    }
    else if (key.startsWith('errorstat_')) counters.errors.set(key.slice('errorstat_'.length), field('count'));
    else if (key === 'used_cpu_sys' || key === 'used_cpu_user') counters.cpuSeconds += Number(value);
  }
  return counters;
}

/** What a server did between two readings. */
function delta(node: { port: number; slots: Array<[number, number]> }, before: RedisCounters, after: RedisCounters): RedisNodeFigures {
  const calls = [...after.calls]
    .filter(([command]) => !OWN_COMMANDS.has(command))
    .map(([command, n]) => ({ command, calls: n - (before.calls.get(command) ?? 0) }))
    .filter((c) => c.calls > 0)
    .sort((a, b) => b.calls - a.calls);
  const deltas = (a: Map<string, number>, b: Map<string, number>) => Object.fromEntries([...b].map(([key, n]) => [key, n - (a.get(key) ?? 0)] as const).filter(([, n]) => n > 0));
  const errors = deltas(before.errors, after.errors);
  return {
    port: node.port,
    slots: node.slots,
    commands: calls.reduce((sum, c) => sum + c.calls, 0),
    cpuSeconds: after.cpuSeconds - before.cpuSeconds,
    errors,
    failedCommands: deltas(before.failed, after.failed),
    topCommands: calls.slice(0, 5),
  };
}

/**
 * Runs the round on `target` with every server of `nodes` read before and after it.
 * @param others Further servers read the same way (a cluster's replicas), returned apart.
 */
export async function measureRedisRound(
  target: RoundTarget,
  nodes: Array<{ port: number; slots: Array<[number, number]> }>,
  spec: RoundSpec,
  others: number[] = [],
  onWindow?: Parameters<typeof runRound>[2],
): Promise<RedisRoundFigures & { others: RedisNodeFigures[] }> {
  const all = [...nodes, ...others.map((port) => ({ port, slots: [] as Array<[number, number]> }))];
  const connecting = await Promise.allSettled(all.map((n) => connectTo(n.port)));
  const open = connecting.flatMap((c) => (c.status === 'fulfilled' ? [c.value] : []));
  let before: RedisCounters[];
  let round: RoundFigures;
  let after: RedisCounters[];
  try {
    const failed = connecting.find((c) => c.status === 'rejected');
    if (failed) throw failed.reason;
    before = await Promise.all(open.map(readCounters));
    round = await runRound(target, spec, onWindow);
    after = await Promise.all(open.map(readCounters));
  } finally {
    for (const redis of open) redis.disconnect();
  }
  const figures = all.map((n, i) => delta(n, before[i]!, after[i]!));
  const redis = figures.slice(0, nodes.length);
  const redisCpuSeconds = redis.reduce((sum, n) => sum + n.cpuSeconds, 0);
  return {
    round,
    redis,
    redisCommands: redis.reduce((sum, n) => sum + n.commands, 0),
    redisCpuSeconds,
    redisCpuUsPerEvent: (redisCpuSeconds * 1e6) / round.eventsReceived,
    others: figures.slice(nodes.length),
  };
}

/** The main stack as a round target (its profile names are not needed here). */
export function stackTarget(stack: BenchStack): RoundTarget {
  return { url: stack.gateway.url, pids: stack.pids, cpuTrees: stack.cpuTrees, profileName: (role) => role };
}

/**
 * Starts the cluster and a stack of its own on it, warms it up, runs the round with the masters'
 * counters read around it, and stops both before returning (the teardown covers a failure half-way).
 */
export async function measureClusterRound(teardown: Teardown, options: ClusterRoundOptions): Promise<ClusterFigures> {
  const { round: spec, log } = options;
  let single = options.single;
  if (!single && options.singleStack) {
    log(`cluster comparison: round ${roundLabel({ sessions: spec.streams, rate: spec.rate })} on the single Redis (port ${options.singleStack.redis.port})`);
    const { others: _none, ...side } = await measureRedisRound(stackTarget(options.singleStack), [{ port: options.singleStack.redis.port, slots: [] }], spec);
    single = { ...side, source: 'the given stack, right before the cluster started' };
  }

  const own = new Teardown();
  teardown.add('cluster-round stack', () => own.runAll(log));
  try {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'dataagent-bench-cluster-'));
    own.add('cluster folder', () => rm(dir, { recursive: true, force: true }));
    log(`cluster: starting ${MASTERS} masters + ${MASTERS * REPLICAS_PER_MASTER} replicas`);
    const { startRedisCluster } = await loadRedisCluster();
    const cluster = await startRedisCluster({ dir, masters: MASTERS, replicasPerMaster: REPLICAS_PER_MASTER, nodeTimeoutMs: NODE_TIMEOUT_MS });
    own.add('redis cluster', () => cluster.stop());
    const masters = await cluster.masters();
    const replicaPorts = cluster.nodes.map((n) => n.port).filter((port) => !masters.some((m) => m.port === port));
    log(`cluster ${cluster.seeds} healthy in ${cluster.startedInMs} ms; masters ${masters.map((m) => m.port).join(', ')}`);

    const stack = await startBenchStack(own, {
      workerConcurrency: options.workerConcurrency,
      workers: options.workers,
      gatewayProcesses: options.gatewayProcesses,
      env: { DATAAGENT_REDIS_CLUSTER_NODES: cluster.seeds },
      log,
    });
    // The stack's own single Redis is idle here: its CPU is left out, every cluster node's counted instead.
    const { redis: _idle, ...pids } = stack.pids;
    for (const node of cluster.nodes) pids[`redis ${node.port}`] = node.pid;
    const target: RoundTarget = { url: stack.gateway.url, pids, cpuTrees: stack.cpuTrees, profileName: (role) => role };

    log(`cluster: warm-up, ${WARMUP_SESSIONS} sessions`);
    await warmUp(target);
    log(`cluster: round ${roundLabel({ sessions: spec.streams, rate: spec.rate })}: ${spec.streams} streams × ${spec.rate} chunks/s for ${STREAM_SECONDS} s`);
    const { others, ...side } = await measureRedisRound(target, masters, spec, replicaPorts);
    const queueSlot = calculateSlot(queuePrefix(true));
    for (const master of side.redis) if (master.slots.some(([a, b]) => a <= queueSlot && queueSlot <= b)) master.holdsQueue = true;
    return {
      streams: spec.streams,
      rate: spec.rate,
      message: streamMessage(spec.rate),
      masters: MASTERS,
      replicasPerMaster: REPLICAS_PER_MASTER,
      single,
      cluster: side,
      replicas: { count: others.length, cpuSeconds: others.reduce((sum, n) => sum + n.cpuSeconds, 0) },
      clusterStartedInMs: cluster.startedInMs,
    };
  } finally {
    log('cluster: stopping its stack and the cluster');
    await own.runAll(log);
  }
}

const num = (value: number | undefined, digits = 0) => (value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : '–');
const pair = (a: number | undefined, b: number | undefined, digits: number) => `${num(a, digits)} / ${num(b, digits)}`;
const counts = (record: Record<string, number>) => Object.entries(record).map(([k, v]) => `${k}×${v}`).join(', ');
const ranges = (slots: Array<[number, number]>) => slots.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',');
const slotCount = (slots: Array<[number, number]>) => slots.reduce((sum, [a, b]) => sum + b - a + 1, 0);

/** The comparison as the lines the bench prints. */
export function formatCluster(c: ClusterFigures): string {
  const { single, cluster } = c;
  const s = single?.round;
  const k = cluster.round;
  const rows: Array<[string, string, string]> = [
    ['runs completed / failed / gapped', s ? `${s.completed} / ${s.failed} / ${s.gapped}` : '–', `${k.completed} / ${k.failed} / ${k.gapped}`],
    ['request → run_started p50 / p99, ms', pair(s?.runStarted.p50, s?.runStarted.p99, 1), pair(k.runStarted.p50, k.runStarted.p99, 1)],
    ['per-event overhead p50 / p99, ms', pair(s?.perEventOverhead.p50, s?.perEventOverhead.p99, 2), pair(k.perEventOverhead.p50, k.perEventOverhead.p99, 2)],
    ['events/s (delivered events)', s ? `${num(s.eventsPerSecond)} (${s.eventsReceived})` : '–', `${num(k.eventsPerSecond)} (${k.eventsReceived})`],
    ['CPU µs per event: gateway', num(s?.cpuPerEventUs.gateway, 1), num(k.cpuPerEventUs.gateway, 1)],
    ['                  workers', num(s?.cpuPerEventUs.workers, 1), num(k.cpuPerEventUs.workers, 1)],
    ['                  gateway+workers', num(s?.cpuPerEventUs.total, 1), num(k.cpuPerEventUs.total, 1)],
    ['Redis CPU µs per event (all masters)', num(single?.redisCpuUsPerEvent, 1), num(cluster.redisCpuUsPerEvent, 1)],
    ['Redis commands per event', num(single ? single.redisCommands / single.round.eventsReceived : undefined, 2), num(cluster.redisCommands / k.eventsReceived, 2)],
    ['Redis commands / CPU s in the round', single ? `${single.redisCommands} / ${num(single.redisCpuSeconds, 2)}` : '–', `${cluster.redisCommands} / ${num(cluster.redisCpuSeconds, 2)}`],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const errorsOf = (side: RedisRoundFigures | undefined) => side?.redis.reduce((sum, n) => sum + (n.errors.CROSSSLOT ?? 0), 0);
  const lines = [
    `Redis Cluster beside the single Redis: round ${roundLabel({ sessions: c.streams, rate: c.rate })} ("${c.message}"), the same round on each, each stack warmed up with ` +
      `${WARMUP_SESSIONS} sessions first. Cluster: ${c.masters} masters + ${c.masters * c.replicasPerMaster} replicas on loopback (scripts/redis-cluster.mjs, ` +
      `healthy in ${num(c.clusterStartedInMs)} ms), DATAAGENT_REDIS_CLUSTER_NODES for gateway and workers, a stack of its own started after the main one stopped` +
      `${single ? `; single Redis: ${single.source}` : '; the single Redis round did not run'}. Redis figures are INFO deltas around the round (commandstats calls, ` +
      'used_cpu_sys + used_cpu_user, errorstats), the bench\'s INFO left out:',
    `  ${''.padEnd(width)} | ${'single Redis'.padStart(16)} | ${'cluster (3 masters)'.padStart(19)}`,
    ...rows.map(([label, a, b]) => `  ${label.padEnd(width)} | ${a.padStart(16)} | ${b.padStart(19)}`),
    `  ${'CROSSSLOT errors'.padEnd(width)} | ${num(errorsOf(single)).padStart(16)} | ${num(errorsOf(cluster)).padStart(19)}`,
  ];
  const failures = [s && Object.keys(s.failures).length ? `single failed: ${counts(s.failures)}` : '', Object.keys(k.failures).length ? `cluster failed: ${counts(k.failures)}` : ''];
  const gaps = [s && Object.keys(s.gaps).length ? `single gapped: ${counts(s.gaps)}` : '', Object.keys(k.gaps).length ? `cluster gapped: ${counts(k.gaps)}` : ''];
  const notes = [...failures, ...gaps].filter(Boolean);
  if (notes.length > 0) lines.push(`  (${notes.join('; ')})`);

  lines.push('');
  lines.push('  Per master in the round (the single Redis last, for scale):');
  lines.push('     port | slots                 | commands | share % | Redis CPU s | CROSSSLOT | MOVED |  ASK | other errors   | busiest commands');
  const row = (n: RedisNodeFigures, total: number, slots: string) => {
    const other = counts(Object.fromEntries(Object.entries(n.errors).filter(([code]) => !(SLOT_ERRORS as readonly string[]).includes(code))));
    const failed = Object.keys(n.failedCommands).length > 0 ? `   (failed: ${counts(n.failedCommands)})` : '';
    const top = n.topCommands.slice(0, 3).map((t) => `${t.command} ${t.calls}`).join(', ');
    return (
      `  ${String(n.port).padStart(7)} | ${slots.padEnd(21)} | ${String(n.commands).padStart(8)} | ${num((n.commands / total) * 100, 1).padStart(7)} | ${num(n.cpuSeconds, 2).padStart(11)} | ` +
      `${String(n.errors.CROSSSLOT ?? 0).padStart(9)} | ${String(n.errors.MOVED ?? 0).padStart(5)} | ${String(n.errors.ASK ?? 0).padStart(4)} | ${(other || '0').padEnd(14)} | ${top}${failed}`
    );
  };
  for (const n of cluster.redis) lines.push(row(n, cluster.redisCommands, `${ranges(n.slots)} (${slotCount(n.slots)})${n.holdsQueue ? ' queue' : ''}`));
  lines.push(
    `  ${'masters'.padStart(7)} | ${`${slotCount(cluster.redis.flatMap((n) => n.slots))} slots`.padEnd(21)} | ${String(cluster.redisCommands).padStart(8)} | ${'100.0'.padStart(7)} | ` +
      `${num(cluster.redisCpuSeconds, 2).padStart(11)} |   (replicas: ${c.replicas.count}, Redis CPU ${num(c.replicas.cpuSeconds, 2)} s in all, not counted above)`,
  );
  if (single) for (const n of single.redis) lines.push(row(n, single.redisCommands, 'single: all 16384'));
  const bare = [...cluster.redis, ...(single?.redis ?? [])].some((n) => (n.errors.ERR ?? 0) > 0 && Object.keys(n.failedCommands).length === 0);
  if (bare) {
    lines.push(
      '  (ERR with no failed command: most likely the CLIENT SETINFO LIB-NAME / LIB-VER pair of an ioredis connection opened during the round ' +
        '(e.g. a sharded subscriber reaching another master), which Redis < 7.2 refuses as an unknown subcommand)',
    );
  }
  lines.push(`  (queue: the master owning the slot of the BullMQ prefix ${queuePrefix(true)}, where every key of the run queue lives; a run's own keys share its {runId} tag)`);
  return lines.join('\n');
}
