/** Percentiles of a set of latency samples, in milliseconds. */
export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

/**
 * Summarises samples with nearest-rank percentiles.
 *
 * @param samples Latencies in ms, in any order (not modified).
 * @returns NaN figures when there are no samples.
 */
export function summarize(samples: readonly number[]): LatencySummary {
  if (samples.length === 0) return { count: 0, p50: NaN, p99: NaN, max: NaN, mean: NaN };
  const sorted = Float64Array.from(samples).sort();
  const rank = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
  let sum = 0;
  for (const value of sorted) sum += value;
  return { count: sorted.length, p50: rank(50), p99: rank(99), max: sorted[sorted.length - 1]!, mean: sum / sorted.length };
}
