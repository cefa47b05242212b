import { latencyStats, percentile, summarize, type Scored } from './stats.js';

describe('percentile', () => {
  it('is the nearest rank', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 95)).toBe(95);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([1, 2, 3, 4], 0)).toBe(1);
  });

  it('refuses no samples', () => {
    expect(() => percentile([], 50)).toThrow(RangeError);
  });
});

describe('latencyStats', () => {
  it('sorts the samples itself and leaves them alone', () => {
    const samples = [30, 10, 20, 40];
    expect(latencyStats(samples)).toEqual({ count: 4, mean: 25, min: 10, p50: 20, p95: 40, p99: 40, max: 40 });
    expect(samples).toEqual([30, 10, 20, 40]);
    expect(latencyStats([])).toBeNull();
  });
});

describe('summarize', () => {
  const result = (status: Scored['status'], category: string, total_ms: number, ttft_ms: number | null = null): Scored => ({ status, category, difficulty: 'easy', total_ms, ttft_ms });

  it('counts statuses, rates categories and times only the answered questions', () => {
    const summary = summarize([result('passed', 'a', 100, 10), result('failed', 'a', 300, 30), result('error', 'b', 5), result('timeout', 'b', 9000), result('passed', 'b', 200)]);
    expect(summary).toMatchObject({ total: 5, passed: 2, failed: 1, error: 1, timeout: 1, pass_rate: 0.4 });
    expect(summary.total_ms).toMatchObject({ count: 3, mean: 200, max: 300 });
    expect(summary.ttft_ms).toMatchObject({ count: 2, mean: 20 });
    expect(summary.by_category).toEqual({ a: { total: 2, passed: 1, pass_rate: 0.5 }, b: { total: 3, passed: 1, pass_rate: 1 / 3 } });
    expect(summary.by_difficulty.easy).toEqual({ total: 5, passed: 2, pass_rate: 0.4 });
  });

  it('gives a zero pass rate and no times for an empty run', () => {
    expect(summarize([])).toMatchObject({ total: 0, pass_rate: 0, total_ms: null, ttft_ms: null });
  });

  it('keeps a category called __proto__ as a category', () => {
    expect(summarize([result('passed', '__proto__', 1)]).by_category['__proto__']).toEqual({ total: 1, passed: 1, pass_rate: 1 });
  });
});
