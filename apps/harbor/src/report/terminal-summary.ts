import type { HarborReport } from './harbor-report.js';
import type { LatencyStats } from './stats.js';

/** Failures listed in the terminal; report.json has them all. */
const FAILURES_SHOWN = 30;

/** 412 ms, 1.23 s, 12.3 s. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return ms < 10_000 ? `${(ms / 1000).toFixed(2)} s` : `${(ms / 1000).toFixed(1)} s`;
}

export function formatPercent(fraction: number): string {
  return `${(100 * fraction).toFixed(1)}%`;
}

function latencyLine(label: string, stats: LatencyStats | null): string {
  if (!stats) return `  ${label.padEnd(14)} –`;
  const parts = (['mean', 'p50', 'p95', 'p99', 'max'] as const).map((key) => `${key} ${formatMs(stats[key])}`);
  return `  ${label.padEnd(14)} ${parts.join('  ')}`;
}

/**
 * The summary printed when a run ends: success rate, mean / p50 / p95 / p99 times, pass rate by
 * category, and the failures.
 */
export function renderTerminalSummary(report: HarborReport): string {
  const { summary, config, run } = report;
  const lines = [
    `Harbor · ${report.question_set.name} (${report.question_set.questions} questions) · ${config.mode} · concurrency ${config.concurrency} · ${config.server}`,
    `  ${summary.total} asked in ${formatMs(run.duration_ms)} (${run.throughput_per_s.toFixed(1)}/s)${run.interrupted ? ', interrupted' : ''}: ` +
      `${summary.passed} passed (${formatPercent(summary.pass_rate)}), ${summary.failed} failed, ${summary.error} errors, ${summary.timeout} timeouts`,
    latencyLine('response time', summary.total_ms),
    latencyLine('first token', summary.ttft_ms),
    `  ${'by category'.padEnd(14)} ${Object.entries(summary.by_category)
      .map(([category, group]) => `${category} ${group.passed}/${group.total}`)
      .join(' · ')}`,
  ];
  if (report.failures.length === 0) {
    lines.push(`  ${'failures'.padEnd(14)} none`);
  } else {
    lines.push(`  failures (${report.failures.length})`);
    for (const failure of report.failures.slice(0, FAILURES_SHOWN)) {
      lines.push(`    ${failure.question_id} #${failure.iteration} [${failure.category}] ${failure.status}: ${failure.reason ?? ''}`);
    }
    if (report.failures.length > FAILURES_SHOWN) lines.push(`    … and ${report.failures.length - FAILURES_SHOWN} more in report.json`);
  }
  return lines.join('\n');
}
