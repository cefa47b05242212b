/**
 * One streaming round of the bench — `streams` concurrent Socket.IO chats, each streaming `rate`
 * stamped chunks per second for STREAM_SECONDS — against a target (DataAgent's gateway, the bare
 * relay), with the CPU of the target's processes over the round. Shared by run-bench.ts and
 * cluster-round.ts so both time the same thing the same way.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH_API_KEY } from './bench-stack.js';
import type { RoundFigures } from './bench-report.js';
import { cpuSplit, roundLabel } from './bench-targets.js';
import { runChatLoad } from './chat-load.js';
import type { ProfileWindow } from './cpu-profile-summary.js';
import { summarize } from './percentiles.js';
import { CpuMeter } from './process-cpu.js';

/** A round: `streams` concurrent chats, each streaming `rate` text chunks per second for STREAM_SECONDS. */
export interface RoundSpec {
  streams: number;
  rate: number;
}

export const STREAM_SECONDS = Math.max(1, Number(process.env.BENCH_STREAM_SECONDS ?? 5) || 5);
export const STAGGER_MS = 1_000;
/** After the last done, the round's CPU window stays open this long: archive writes and unsubscribes count too. */
export const SETTLE_MS = 1_000;
export const WARMUP_SESSIONS = 50;

/** A stream of `rate` stamped chunks per second lasting `seconds`. */
export const streamMessage = (rate: number, seconds = STREAM_SECONDS) => `[[stamp]] [[chunks:${Math.round(rate * seconds)}]] [[slow:${Math.round(1000 / rate)}]]`;

const positive = (n: number) => Number.isFinite(n) && n > 0;

/** Round specs as BENCH_ROUNDS writes them: `streams x rate`, comma-separated (`10x10,100x50`); malformed ones are left out. */
export function parseRoundSpecs(text: string): RoundSpec[] {
  return text
    .split(',')
    .map((spec) => spec.trim().toLowerCase().split('x').map(Number))
    .filter((parts) => parts.length === 2 && positive(parts[0]!) && positive(parts[1]!))
    .map(([streams, rate]) => ({ streams: streams!, rate: rate! }));
}

/** What a streaming round drives: DataAgent's gateway, or the bare relay; `pids` as CpuMeter takes them. */
export interface RoundTarget {
  url: string;
  pids: Record<string, number>;
  cpuTrees: string[];
  /** The name of a role's CPU profile (cpu-profile-summary.ts matches a window's CPU seconds to profiles by it). */
  profileName: (role: string) => string;
}

/** A round's CPU window on the monotonic clock V8's CPU profiles use (µs), for cpu-profile-summary.ts. */
export const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/** The warm-up before a target's first round: WARMUP_SESSIONS chats at 10 chunks/s, then SETTLE_MS. */
export async function warmUp(target: Pick<RoundTarget, 'url'>): Promise<void> {
  await runChatLoad({ url: target.url, apiKey: BENCH_API_KEY, sessions: WARMUP_SESSIONS, message: streamMessage(10), staggerMs: STAGGER_MS, timeoutMs: 60_000 });
  await sleep(SETTLE_MS);
}

/**
 * One streaming round; its CPU window covers connecting, streaming and SETTLE_MS after the last done.
 * @param onWindow Told the window's bounds and the events delivered in it (for the CPU profiles' summary).
 */
export async function runRound(target: RoundTarget, { streams: sessions, rate }: RoundSpec, onWindow?: (window: ProfileWindow) => void): Promise<RoundFigures> {
  const message = streamMessage(rate);
  const cpu = new CpuMeter(target.pids, target.cpuTrees);
  const fromUs = monotonicUs();
  cpu.start();
  const result = await runChatLoad({ url: target.url, apiKey: BENCH_API_KEY, sessions, message, staggerMs: STAGGER_MS, timeoutMs: 60_000 });
  await sleep(SETTLE_MS);
  const cpuUse = cpu.stop();
  const cpuSeconds = Object.fromEntries(Object.entries(cpuUse).map(([role, use]) => [target.profileName(role), use.seconds]));
  onWindow?.({ label: roundLabel({ sessions, rate }), fromUs, toUs: monotonicUs(), events: result.eventsReceived, cpuSeconds });
  return {
    sessions,
    rate,
    chunks: Math.round(rate * STREAM_SECONDS),
    message,
    completed: result.completed,
    failed: result.failed,
    failures: result.failures,
    runStarted: summarize(result.runStartedMs),
    perEventOverhead: summarize(result.eventOverheadMs),
    ack: summarize(result.ackMs),
    emitToQueued: summarize(result.emitToQueuedMs),
    emitToWorkerStart: summarize(result.emitToWorkerStartMs),
    llmToWorker: summarize(result.llmToWorkerMs),
    workerToClient: summarize(result.workerToClientMs),
    connectMs: result.connectMs,
    wallMs: result.wallMs,
    clientLoopDelayMs: result.clientLoopDelayMs,
    eventsReceived: result.eventsReceived,
    stampedTextEvents: result.stampedTextEvents,
    eventsPerSecond: result.eventsReceived / (result.wallMs / 1000),
    gapped: result.gapped,
    gaps: result.gaps,
    failedOrGapped: result.failedOrGapped,
    cpu: cpuUse,
    cpuPerEventUs: cpuSplit(cpuUse, result.eventsReceived, 1e6),
  };
}
