/**
 * Issue 14's targets, each checked against the figures and the floors of the same bench run,
 * and the CPU split they use.
 */
import type { BenchReport, CpuPerEvent, RoundFigures, TargetCheck } from './bench-report.js';
import type { CpuUse } from './process-cpu.js';

const num = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : '–');

/** The per-event CPU ceiling for gateway + workers, µs. */
export const CPU_TARGET_US_PER_EVENT = 50;

/** Gateway, the workers summed (roles `worker…`), and both, from CPU seconds per role; `per` divides, `scale` converts. */
export function cpuSplit(cpu: Record<string, CpuUse>, per: number, scale: number): CpuPerEvent {
  const gateway = cpu.gateway?.seconds ?? NaN;
  const workers = Object.entries(cpu).reduce((sum, [role, use]) => (role.startsWith('worker') ? sum + use.seconds : sum), 0);
  return { gateway: (gateway * scale) / per, workers: (workers * scale) / per, total: ((gateway + workers) * scale) / per };
}

/** Issue 30's ceiling: gateway + workers' CPU per delivered event at most this many times the bare relay's, same round, same run. */
export const RELAY_RATIO_TARGET = 1.5;

/** The bare relay's run of the same round as `round`, when the bench ran one. */
export const relayRoundOf = (report: BenchReport, round: { sessions: number; rate: number }) =>
  report.relayRounds?.find((r) => r.sessions === round.sessions && r.rate === round.rate);

export const roundLabel = (r: { sessions: number; rate: number }) => `${r.sessions}×${r.rate}/s`;

/** Hop floors of the same run: a text event crosses Redis pub/sub and Socket.IO; run_started the queue too. */
export function hopFloors(report: BenchReport) {
  const floor = (name: string) => report.floors.find((f) => f.name.startsWith(name));
  const [queue, pubsub, socketIo] = [floor('BullMQ')?.latency, floor('Redis')?.latency, floor('Socket.IO emit')?.latency];
  const cpu = report.floors.find((f) => f.cpuUsPerEvent !== undefined && f.name.includes('CPU'))?.cpuUsPerEvent ?? floor('Socket.IO emit')?.cpuUsPerEvent;
  return {
    event: pubsub && socketIo ? { p50: pubsub.p50 + socketIo.p50, p99: pubsub.p99 + socketIo.p99 } : undefined,
    start: queue && pubsub && socketIo ? { p50: queue.p50 + pubsub.p50 + socketIo.p50, p99: queue.p99 + pubsub.p99 + socketIo.p99 } : undefined,
    // A cancel crosses Redis twice (gateway → worker, worker's done → gateway) and Socket.IO once.
    cancel: pubsub && socketIo ? { p99: 2 * pubsub.p99 + socketIo.p99 } : undefined,
    socketIoCpuUs: cpu,
  };
}

/** The targets table, each figure beside the floor of the same run. */
export function checkTargets(report: BenchReport): TargetCheck[] {
  const floors = hopFloors(report);
  const round = (streams: number, rate: number) => report.rounds.find((r) => r.sessions === streams && r.rate === rate);
  const p5099 = (l?: { p50: number; p99: number }) => (l ? `p50 ${num(l.p50, 1)} ms, p99 ${num(l.p99, 1)} ms` : '–');
  const checks: TargetCheck[] = [];
  for (const [streams, rate] of [
    [1000, 10],
    [100, 50],
  ] as const) {
    const r = round(streams, rate);
    checks.push({
      figure: `per-event overhead @${streams}×${rate}/s`,
      target: 'p50 ≤ 5 ms, p99 ≤ 50 ms',
      measured: r ? p5099(r.perEventOverhead) : 'round not run',
      floor: `${p5099(floors.event)} (pub/sub + Socket.IO)`,
      met: r ? r.perEventOverhead.p50 <= 5 && r.perEventOverhead.p99 <= 50 : undefined,
    });
  }
  const big = round(1000, 10);
  checks.push({
    figure: 'request → run_started @1000',
    target: 'p99 ≤ 100 ms',
    measured: big ? `p99 ${num(big.runStarted.p99, 1)} ms` : 'round not run',
    floor: floors.start ? `p99 ${num(floors.start.p99, 1)} ms (queue + pub/sub + Socket.IO)` : '–',
    met: big ? big.runStarted.p99 <= 100 : undefined,
  });
  const burst = report.cancelBurst;
  checks.push({
    figure: `cancel burst, ${burst?.runs ?? 100} at once`,
    target: `p99 ≤ ${burst?.targetP99Ms ?? 200} ms`,
    measured: burst ? `p99 ${num(burst.latency.p99, 1)} ms (${burst.cancelled}/${burst.runs} cancelled)` : 'not run',
    floor: floors.cancel ? `p99 ${num(floors.cancel.p99, 1)} ms (2× pub/sub + Socket.IO)` : '–',
    met: burst ? burst.latency.p99 <= burst.targetP99Ms && burst.cancelled === burst.runs : undefined,
  });
  const worst = report.rounds.reduce<RoundFigures | undefined>((w, r) => (!w || !(r.cpuPerEventUs.total <= w.cpuPerEventUs.total) ? r : w), undefined);
  checks.push({
    figure: 'CPU, gateway + workers, streaming rounds',
    target: `≤ ${CPU_TARGET_US_PER_EVENT} µs per delivered event`,
    measured: worst ? `worst ${num(worst.cpuPerEventUs.total)} µs (${roundLabel(worst)})` : 'no round',
    floor: floors.socketIoCpuUs !== undefined ? `${num(floors.socketIoCpuUs, 1)} µs per emit (bare Socket.IO server)` : '–',
    met: worst ? report.rounds.every((r) => r.cpuPerEventUs.total <= CPU_TARGET_US_PER_EVENT) : undefined,
  });
  const compared = report.rounds.flatMap((r) => {
    const relay = relayRoundOf(report, r);
    return relay ? [{ r, ratio: r.cpuPerEventUs.total / relay.cpuPerEventUs.total, relay }] : [];
  });
  const worstRatio = compared.reduce<(typeof compared)[number] | undefined>((w, c) => (!w || !(c.ratio <= w.ratio) ? c : w), undefined);
  checks.push({
    figure: 'CPU per event, gateway + workers vs bare relay',
    target: `≤ ${RELAY_RATIO_TARGET}× the bare relay, same round`,
    measured: worstRatio ? `worst ${num(worstRatio.ratio, 2)}× (${roundLabel(worstRatio.r)}: ${num(worstRatio.r.cpuPerEventUs.total)} vs ${num(worstRatio.relay.cpuPerEventUs.total)} µs)` : 'relay not run',
    floor: worstRatio ? `${num(worstRatio.relay.cpuPerEventUs.total, 1)} µs per event (bare relay, ${roundLabel(worstRatio.r)})` : '–',
    met: worstRatio ? compared.every((c) => c.ratio <= RELAY_RATIO_TARGET) : undefined,
  });
  const perRound = [...report.rounds.map((r) => ({ label: roundLabel(r), bad: r.failedOrGapped })), ...(report.perRunCpu ? [{ label: 'per-run CPU', bad: report.perRunCpu.failedOrGapped }] : [])];
  const bad = perRound.filter((r) => r.bad > 0);
  checks.push({
    figure: 'runs failed or gapped',
    target: '0 in every round',
    measured: perRound.length === 0 ? 'no round' : bad.length === 0 ? `0 in ${perRound.length} rounds` : bad.map((r) => `${r.bad} @${r.label}`).join(', '),
    floor: '0',
    met: perRound.length > 0 ? bad.length === 0 : undefined,
  });
  return checks;
}
