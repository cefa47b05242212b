import type { ResultStatus } from '../runs/scoring.js';

/** Latency figures in milliseconds; percentiles by nearest rank. */
export interface LatencyStats {
  count: number;
  mean: number;
  min: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/**
 * The nearest-rank percentile: the smallest sample with at least p% of the samples at or below it.
 *
 * @param sorted Samples in ascending order, at least one.
 * @param p 0..100
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) throw new RangeError('percentile of no samples');
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Mean, extremes and p50/p95/p99 of `samples` (any order); null when there are none. */
export function latencyStats(samples: readonly number[]): LatencyStats | null {
  if (samples.length === 0) return null;
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: sorted.length,
    mean: sum / sorted.length,
    min: sorted[0],
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1],
  };
}

/** What the summary needs of a result. */
export interface Scored {
  status: ResultStatus;
  category: string;
  difficulty: string;
  total_ms: number;
  ttft_ms: number | null;
}

export interface GroupStats {
  total: number;
  passed: number;
  pass_rate: number;
}

export interface Summary {
  total: number;
  passed: number;
  failed: number;
  error: number;
  timeout: number;
  /** passed / total; 0 when nothing ran. */
  pass_rate: number;
  /** Over the answered questions (passed or failed): errors and timeouts have no answer time. */
  total_ms: LatencyStats | null;
  ttft_ms: LatencyStats | null;
  by_category: Record<string, GroupStats>;
  by_difficulty: Record<string, GroupStats>;
}

/** Counts, pass rates and latency figures of a run's results. */
export function summarize(results: readonly Scored[]): Summary {
  const count = (status: ResultStatus) => results.filter((r) => r.status === status).length;
  const answered = results.filter((r) => r.status === 'passed' || r.status === 'failed');
  const passed = count('passed');
  return {
    total: results.length,
    passed,
    failed: count('failed'),
    error: count('error'),
    timeout: count('timeout'),
    pass_rate: results.length === 0 ? 0 : passed / results.length,
    total_ms: latencyStats(answered.map((r) => r.total_ms)),
    ttft_ms: latencyStats(answered.flatMap((r) => (r.ttft_ms === null ? [] : [r.ttft_ms]))),
    by_category: groupBy(results, (r) => r.category),
    by_difficulty: groupBy(results, (r) => r.difficulty),
  };
}

function groupBy(results: readonly Scored[], key: (r: Scored) => string): Record<string, GroupStats> {
  // No prototype: a category may be called anything, "__proto__" included.
  const groups: Record<string, GroupStats> = Object.create(null);
  for (const result of results) {
    const group = (groups[key(result)] ??= { total: 0, passed: 0, pass_rate: 0 });
    group.total++;
    if (result.status === 'passed') group.passed++;
  }
  for (const group of Object.values(groups)) group.pass_rate = group.passed / group.total;
  return groups;
}
