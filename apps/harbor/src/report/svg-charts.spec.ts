import { escapeHtml, histogramBins, histogramSvg, niceStep, passRateSvg, ticks, timeSeriesSvg } from './svg-charts.js';

describe('histogramBins', () => {
  it('covers every value with round bins', () => {
    const values = [103, 250, 251, 980, 1000, 1999];
    const bins = histogramBins(values);
    expect(bins.reduce((sum, b) => sum + b.count, 0)).toBe(values.length);
    expect(bins[0].from).toBeLessThanOrEqual(103);
    expect(bins.at(-1)!.to).toBeGreaterThan(1999);
    const width = bins[0].to - bins[0].from;
    expect([1, 2, 5].some((f) => Number.isInteger(Math.log10(width / f)))).toBe(true);
  });

  it('handles one value, equal values and none', () => {
    expect(histogramBins([42]).map((b) => b.count)).toEqual([1]);
    expect(histogramBins([5, 5, 5]).reduce((sum, b) => sum + b.count, 0)).toBe(3);
    expect(histogramBins([])).toEqual([]);
  });
});

describe('niceStep', () => {
  it('rounds up to 1, 2 or 5 times a power of ten', () => {
    expect([niceStep(0.3), niceStep(1), niceStep(1.1), niceStep(3), niceStep(7), niceStep(420)]).toEqual([0.5, 1, 2, 5, 10, 500]);
  });
});

describe('charts', () => {
  const format = (ms: number) => `${ms} ms`;

  it('carries its figures as data attributes', () => {
    const svg = histogramSvg(histogramBins([10, 20, 30]), format);
    expect(svg).toContain('data-chart="latency-histogram" data-count="3"');
    const counts = [...svg.matchAll(/class="bar"[^>]*data-count="(\d+)"/g)].map((m) => Number(m[1]));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(3);
  });

  it('escapes labels and titles', () => {
    expect(passRateSvg([{ label: '<script>', passed: 1, total: 2 }])).not.toContain('<script>');
    expect(timeSeriesSvg([{ x: 1, y: 2, status: 'passed', title: '"q" & <b>' }], format)).toContain('&quot;q&quot; &amp; &lt;b&gt;');
    expect(escapeHtml(`<a href="x">'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&lt;/a&gt;');
  });

  it('says so when there is nothing to draw', () => {
    expect(histogramSvg([], format)).toContain('no answers to show');
    expect(timeSeriesSvg([], format)).toContain('no answers to show');
  });
});

describe('ticks', () => {
  it('reaches the largest value, so no mark is drawn past the axis', () => {
    expect(ticks(0, 21, 4)).toEqual([0, 10, 20, 30]);
    expect(ticks(0, 20, 4)).toEqual([0, 5, 10, 15, 20]);
    expect(ticks(0, 0.95, 6)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(ticks(0, 0)).toEqual([0, 1]);
  });
});
