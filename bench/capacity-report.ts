/**
 * The capacity report (capacity.ts): its figures, the terminal table and headline, the JSON and
 * the self-contained HTML page (inline SVG charts, no script).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { escapeHtml } from '../apps/harbor/src/report/svg-charts.js';
import { lineChartSvg, type Series } from './capacity-charts.js';
import { SIZED_PARTS, sizingFormula, type SizingAssumptions, type SizingCosts, type SizingFigures, type SizingRow } from './capacity-sizing.js';
import type { LatencySummary } from './percentiles.js';
import { OTHER_PROCESSES, type CpuUse } from './process-cpu.js';

export interface CapacityObjectives {
  /** Per-event overhead p99 (client receive − the LLM's stamp), ms. */
  eventP99Ms: number;
  /** Request → run_started p99, ms. */
  startP99Ms: number;
}

export interface CapacityWorkload {
  /** The chat message of every run: the scripted LLM's directives. */
  message: string;
  tool: string;
  /** Chunks per second and seconds of each run's first (streamed) answer. */
  rate: number;
  seconds: number;
  chunks: number;
  /** Each level's chats are sent evenly over this window. */
  staggerMs: number;
  /** Each level's CPU window stays open this long after its last run settled. */
  settleMs: number;
}

/** One level of the ramp: `runs` concurrent streaming, tool-calling runs. */
export interface LevelFigures {
  runs: number;
  held: boolean;
  /** Why the level did not hold (empty when it held). */
  breaches: string[];
  /** Set when the level could not run at all (e.g. sockets refused). */
  error?: string;
  completed: number;
  failed: number;
  failures: Record<string, number>;
  gapped: number;
  gaps: Record<string, number>;
  failedOrGapped: number;
  /** tool_result events by status. */
  toolResults: Record<string, number>;
  /** tool_result events with status success. */
  toolCallsCompleted: number;
  hitlRequests: number;
  runStarted: LatencySummary;
  perEventOverhead: LatencySummary;
  eventsReceived: number;
  /** Events received / (first chat sent → last run settled). */
  eventsPerSecond: number;
  wallSeconds: number;
  /** First chat sent → SETTLE after the last run settled: what the CPU figures cover. */
  cpuWindowSeconds: number;
  clientLoopDelayMs: { p50: number; p99: number; max: number };
  /** CPU use per process role over the window (`other procs`: the rest of the machine). */
  cpu: Record<string, CpuUse>;
  /** CPU µs per delivered event, per role, plus `workers` (every worker summed). */
  cpuUsPerEvent: Record<string, number>;
  /** The whole machine's busy share over the window, % of all its cores. */
  machineBusyPercent: number;
  /** What processes outside the stack and the bench used over the window, % of all cores (other work on the machine). */
  othersBusyPercent: number;
}

/** Short tool-calling runs, for the CPU per run the sizing adds per turn. */
export interface PerRunFigures {
  runs: number;
  message: string;
  staggerMs: number;
  completed: number;
  failedOrGapped: number;
  toolCallsCompleted: number;
  eventsPerRun: number;
  runStarted: LatencySummary;
  cpuUsPerRun: Record<string, number>;
}

export interface CapacityReport {
  startedAt: string;
  durationSeconds?: number;
  machine: { cpus: number; cpuModel: string; node: string; loadAverage: number[] };
  stack: { workers: number; workerConcurrency: number; gatewayProcesses: number };
  objectives: CapacityObjectives;
  workload: CapacityWorkload;
  levelsPlanned: number[];
  /** One chat before the ramp: its run must end with the tool's result, not an approval request. */
  toolCheck?: { ok: boolean; detail: string; eventTypes: string[] };
  perRun?: PerRunFigures;
  levels: LevelFigures[];
  /** The largest level that held (undefined: none did). */
  heldRuns?: number;
  /** The first level that broke (undefined: every level run held, or none ran). */
  brokeAtRuns?: number;
  sizing?: { basedOn: string; assumptions: SizingAssumptions; figures: SizingFigures; costs: SizingCosts; rows: SizingRow[]; formula: string[] };
  error?: string;
}

const num = (value: number | undefined, digits = 0) => (value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : '–');
const int = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–');

/** The stack's roles, in the order the tables show them: gateway, workers (summed), each worker, LLM server, Redis, MariaDB, bench clients. */
export function cpuRoles(level: LevelFigures | undefined): string[] {
  if (!level) return [];
  const workers = Object.keys(level.cpu).filter((role) => role.startsWith('worker'));
  const rest = Object.keys(level.cpu).filter((role) => role !== 'gateway' && !role.startsWith('worker') && role !== OTHER_PROCESSES);
  return ['gateway', 'workers', ...(workers.length > 1 ? workers : []), ...rest];
}

export const largestHeld = (report: CapacityReport) => report.levels.filter((l) => l.held).at(-1);

/** Other work's share of the machine at the level the headline quotes, when it is large enough to say so. */
export function contentionNote(report: CapacityReport): string | undefined {
  const level = largestHeld(report) ?? report.levels[0];
  if (!level || !(level.othersBusyPercent >= 10)) return undefined;
  return `Other work on this machine used ${num(level.othersBusyPercent)} % of its cores during the ${level.runs}-run level (load average ${report.machine.loadAverage.map((n) => n.toFixed(1)).join(' ')} at start): every figure here shared the cores with it, so capacity is understated and CPU per event overstated.`;
}

/** The one line the README quotes. */
export function headline(report: CapacityReport): string {
  const machine = `this machine (${report.machine.cpus} cores, ${report.machine.cpuModel})`;
  const held = largestHeld(report);
  const broke = report.levels.find((l) => !l.held);
  if (!held) {
    return broke
      ? `No level held on ${machine}: the smallest, ${broke.runs} concurrent streaming, tool-calling runs, broke (${broke.breaches.join('; ')}).`
      : `No level ran on ${machine}${report.error ? `: ${report.error}` : ''}.`;
  }
  const us = held.cpuUsPerEvent;
  const atLeast = broke ? '' : ` (every level run held: the ramp ended before the objectives broke, so this is a floor)`;
  return (
    `${held.runs} concurrent streaming, tool-calling runs held on ${machine} with per-event p99 ${num(held.perEventOverhead.p99)} ms, ` +
    `run start p99 ${num(held.runStarted.p99)} ms: ${int(held.eventsPerSecond)} events/s, CPU per event: gateway ${num(us.gateway, 1)} µs, ` +
    `workers ${num(us.workers, 1)} µs, redis ${num(us.redis, 1)} µs${atLeast}`
  );
}

function textTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const LEVEL_HEADER = ['runs', 'held', 'start p50', 'start p99', 'event p50', 'event p99', 'events/s', 'failed', 'gapped', 'tools ok', 'µs/ev gw', 'workers', 'redis', 'mariadb', 'llm', 'machine busy', 'others', 'client lag p99'];

function levelRow(l: LevelFigures): string[] {
  const us = l.cpuUsPerEvent;
  return [
    String(l.runs),
    l.held ? 'yes' : 'NO',
    `${num(l.runStarted.p50)} ms`,
    `${num(l.runStarted.p99)} ms`,
    `${num(l.perEventOverhead.p50, 1)} ms`,
    `${num(l.perEventOverhead.p99, 1)} ms`,
    int(l.eventsPerSecond),
    String(l.failed),
    String(l.gapped),
    `${l.toolCallsCompleted}/${l.runs}`,
    num(us.gateway, 1),
    num(us.workers, 1),
    num(us.redis, 1),
    num(us.mariadb, 1),
    num(us['llm server'], 1),
    `${num(l.machineBusyPercent)} %`,
    `${num(l.othersBusyPercent)} %`,
    `${num(l.clientLoopDelayMs.p99)} ms`,
  ];
}

function sizingRows(report: CapacityReport): string[][] {
  return (report.sizing?.rows ?? []).map((r) => [
    int(r.people),
    int(r.eventsPerSecond),
    num(r.runsPerSecond, 0),
    `${num(r.cores.gateway, 1)} (${r.gatewayProcesses} proc)`,
    `${num(r.cores.workers, 1)} (${r.workerProcesses} proc)`,
    `${num(r.cores.redis, 2)} (${r.redisShards} shard${r.redisShards === 1 ? '' : 's'})`,
    `${num(r.cores.mysql, 2)} (${r.mysqlCores} core${r.mysqlCores === 1 ? '' : 's'})`,
  ]);
}
const SIZING_HEADER = ['people', 'events/s', 'runs/s', 'gateway cores', 'worker cores', 'redis cores', 'mysql cores'];

/** The terminal form: objectives, one row per level, why the last one broke, the headline and the sizing rows. */
export function formatCapacity(report: CapacityReport): string {
  const w = report.workload;
  const lines = [
    `Capacity: concurrent streaming, tool-calling runs (each ${w.chunks} stamped chunks at ${w.rate}/s, then ${w.tool}, then a short answer); ` +
      `a level holds when per-event p99 ≤ ${report.objectives.eventP99Ms} ms, run start p99 ≤ ${report.objectives.startP99Ms} ms, no run failed or gapped and every run's tool call completed.`,
    `Stack: 1 gateway (${report.stack.gatewayProcesses} process${report.stack.gatewayProcesses === 1 ? '' : 'es'}), ${report.stack.workers} workers (concurrency ${report.stack.workerConcurrency} each), Redis, MariaDB, the scripted LLM server and the bench clients, all on ${report.machine.cpus} cores (${report.machine.cpuModel}); load average at start ${report.machine.loadAverage.map((n) => n.toFixed(2)).join(' ')}.`,
    '',
    textTable(LEVEL_HEADER, report.levels.map(levelRow)),
    '',
    '(µs/ev: CPU µs per delivered event of gateway, workers summed, redis-server, mariadbd, the scripted LLM server; machine busy: every process on the machine, % of all cores; others: the part of it outside the stack and the bench (other work sharing the cores); client lag: the bench client\'s event-loop lag, which its receive times carry.)',
  ];
  for (const l of report.levels.filter((x) => !x.held)) lines.push(`${l.runs} runs broke: ${l.breaches.join('; ')}`);
  if (report.perRun) {
    const p = report.perRun;
    lines.push(
      `CPU per run (${p.runs} short tool-calling runs over ${p.staggerMs} ms, ${num(p.eventsPerRun, 1)} events each, ${p.failedOrGapped} failed or gapped): gateway ${num(p.cpuUsPerRun.gateway)} µs, workers ${num(p.cpuUsPerRun.workers)} µs, redis ${num(p.cpuUsPerRun.redis)} µs, mariadb ${num(p.cpuUsPerRun.mariadb)} µs.`,
    );
  }
  lines.push('', headline(report));
  const contention = contentionNote(report);
  if (contention) lines.push(contention);
  if (report.sizing) {
    const a = report.sizing.assumptions;
    lines.push('', `Sizing (${report.sizing.basedOn}; ${a.tokensPerSecond} tokens/s per person, ${a.eventsPerToken} event per token, a run every ${a.runEverySeconds} s, cores planned at ${Math.round(a.utilization * 100)} %):`, textTable(SIZING_HEADER, sizingRows(report)));
    lines.push(...report.sizing.formula.map((f) => `  ${f}`));
  }
  return lines.join('\n');
}

export async function writeCapacityJson(report: CapacityReport, file: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(report, (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? null : value), 2)}\n`);
}

const COLORS: Record<string, string> = {
  gateway: '#1f77b4',
  workers: '#d62728',
  worker: '#e377c2',
  'worker 2': '#ff9896',
  redis: '#2ca02c',
  mariadb: '#9467bd',
  'llm server': '#8c564b',
  'bench clients': '#7f7f7f',
};
const color = (role: string) => COLORS[role] ?? '#bcbd22';

function htmlTable(header: string[], rows: string[][], rowClass?: (i: number) => string): string {
  const head = `<tr>${header.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr>`;
  const body = rows.map((r, i) => `<tr${rowClass ? ` class="${rowClass(i)}"` : ''}>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`).join('');
  return `<div class="wide"><table><thead>${head}</thead><tbody>${body}</tbody></table></div>`;
}

/** The self-contained page: headline, the two charts, the table, the sizing with its formula. */
export function capacityHtml(report: CapacityReport): string {
  const held = largestHeld(report);
  const levels = report.levels;
  const vLines = held ? [{ value: held.runs, label: `held: ${held.runs}`, color: '#333' }] : [];
  const latency = lineChartSvg({
    label: 'p99 latency against concurrent runs',
    xLabel: 'concurrent streaming, tool-calling runs',
    yLabel: 'p99, ms (log scale)',
    yLog: true,
    format: (y) => (y >= 1000 ? `${y / 1000} s` : `${y} ms`),
    series: [
      { name: 'per-event p99', color: '#1f77b4', points: levels.map((l) => ({ x: l.runs, y: l.perEventOverhead.p99 })) },
      { name: 'run start p99', color: '#d62728', points: levels.map((l) => ({ x: l.runs, y: l.runStarted.p99 })) },
    ],
    hLines: [
      { value: report.objectives.eventP99Ms, label: `event objective ${report.objectives.eventP99Ms} ms`, color: '#1f77b4' },
      { value: report.objectives.startP99Ms, label: `start objective ${report.objectives.startP99Ms} ms`, color: '#d62728' },
    ],
    vLines,
  });
  const roles = cpuRoles(levels[0]).filter((r) => r !== 'bench clients');
  const cpu = lineChartSvg({
    label: 'CPU µs per delivered event per process against concurrent runs',
    xLabel: 'concurrent streaming, tool-calling runs',
    yLabel: 'CPU µs per delivered event',
    format: (y) => `${y}`,
    series: roles.map<Series>((role) => ({
      name: role,
      color: color(role),
      dashed: /^worker( \d+)?$/.test(role) && roles.includes('workers'),
      points: levels.map((l) => ({ x: l.runs, y: l.cpuUsPerEvent[role] ?? NaN })),
    })),
    vLines,
  });
  const w = report.workload;
  const o = report.objectives;
  const broke = levels.filter((l) => !l.held);
  const levelTable = htmlTable(LEVEL_HEADER, levels.map(levelRow), (i) => (levels[i]!.held ? 'held' : 'broke'));
  const roleHeader = ['runs', ...cpuRoles(levels[0]), OTHER_PROCESSES];
  const roleTable = htmlTable(
    roleHeader.map((h, i) => (i === 0 ? h : `${h} µs/ev`)),
    levels.map((l) => [String(l.runs), ...roleHeader.slice(1).map((role) => num(l.cpuUsPerEvent[role], 1))]),
  );
  const sizing = report.sizing;
  const sizingSection = sizing
    ? `<h2>Sizing</h2>
<p>From ${escapeHtml(sizing.basedOn)}: people streaming at ${sizing.assumptions.tokensPerSecond} tokens/s, ${sizing.assumptions.eventsPerToken} event per token, a run every ${sizing.assumptions.runEverySeconds} s each, cores planned at ${Math.round(sizing.assumptions.utilization * 100)} % busy.</p>
${htmlTable(SIZING_HEADER, sizingRows(report))}
<p>Costs used (µs): ${SIZED_PARTS.map((p) => `${p} ${num(sizing.costs.eventUs[p], 1)} per event + ${num(sizing.costs.runUs[p])} per run (${sizing.costs.basis[p]})`).map(escapeHtml).join('; ')}.</p>
<h3>Formula</h3>
<ol>${sizing.formula.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}</ol>
<p class="note">Only the CPU is sized: memory, sockets per process, network and the LLM provider's own limits are not. The figures come from one machine where every process (the bench's clients included) shared the same cores, so a part's CPU per event here includes its share of that contention.</p>`
    : '';
  const perRun = report.perRun
    ? `<p>CPU per run: ${report.perRun.runs} short tool-calling runs (<code>${escapeHtml(report.perRun.message)}</code>) over ${report.perRun.staggerMs} ms, ${num(report.perRun.eventsPerRun, 1)} events each, ${report.perRun.failedOrGapped} failed or gapped: ` +
      `${escapeHtml(Object.entries(report.perRun.cpuUsPerRun).map(([role, us]) => `${role} ${num(us)} µs`).join(', '))}.</p>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>DataAgent capacity</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1180px;color:#222;padding:0 16px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px}h3{font-size:15px}
.headline{font-size:17px;font-weight:600;background:#f3f6fa;border-left:4px solid #1f77b4;padding:10px 14px}
div.wide{overflow-x:auto}table{border-collapse:collapse;margin:10px 0;font-size:12px}th,td{border:1px solid #d6dbe1;padding:3px 5px;text-align:right}th{background:#f3f6fa}
td{white-space:nowrap}td:first-child,th:first-child{text-align:left}tr.broke td{background:#fdecea}
svg.chart{width:100%;max-width:760px;display:block;margin:8px 0}.tick{font-size:11px;fill:#444}.label{font-size:12px;fill:#222}
code{font-size:12px;background:#f3f3f3;padding:1px 3px}.note{color:#555;font-size:13px}
</style></head><body>
<h1>DataAgent capacity: concurrent streaming, tool-calling runs</h1>
<p class="headline">${escapeHtml(headline(report))}</p>
${contentionNote(report) ? `<p class="note"><b>Note:</b> ${escapeHtml(contentionNote(report)!)}</p>` : ''}
<p>${report.machine.cpus} cores (${escapeHtml(report.machine.cpuModel)}), Node ${escapeHtml(report.machine.node)}, load average at start ${report.machine.loadAverage.map((n) => n.toFixed(2)).join(' ')}; started ${escapeHtml(report.startedAt)}${report.durationSeconds ? `, took ${num(report.durationSeconds)} s` : ''}.
Stack on loopback: 1 gateway (${report.stack.gatewayProcesses} process${report.stack.gatewayProcesses === 1 ? '' : 'es'}), ${report.stack.workers} workers (concurrency ${report.stack.workerConcurrency} each), Redis, MariaDB, the scripted LLM server, and the bench's Socket.IO clients in one more process, all on the same cores.</p>
<p>Each run: <code>${escapeHtml(w.message)}</code>: ${w.chunks} stamped chunks at ${w.rate}/s, then a call to <code>${escapeHtml(w.tool)}</code>, then a short streamed answer with its result. Each level's chats are sent over ${w.staggerMs} ms, one socket each.
A level <b>holds</b> when per-event overhead p99 (client receive − the LLM server's write stamp) ≤ ${o.eventP99Ms} ms, request → run_started p99 ≤ ${o.startP99Ms} ms, no run failed or gapped, and every run's tool call completed. The ramp stops at the first level that breaks.
CPU per event: each process's CPU (from /proc) from the first chat sent to ${w.settleMs} ms after the last run ended, ÷ the events the clients received.</p>
${report.toolCheck ? `<p>Tool check before the ramp: ${report.toolCheck.ok ? 'passed' : '<b>FAILED</b>'}: ${escapeHtml(report.toolCheck.detail)}.</p>` : ''}
${report.error ? `<p><b>Error:</b> ${escapeHtml(report.error)}</p>` : ''}
<h2>p99 against concurrent runs</h2>
${latency}
<h2>CPU per event against concurrent runs</h2>
${cpu}
<h2>Levels</h2>
${levelTable}
${broke.map((l) => `<p>${l.runs} runs broke: ${escapeHtml(l.breaches.join('; '))}</p>`).join('\n')}
<h3>CPU µs per delivered event, every process</h3>
${roleTable}
${perRun}
${sizingSection}
</body></html>
`;
}

export async function writeCapacityHtml(report: CapacityReport, file: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, capacityHtml(report));
}
