/**
 * The report's charts as inline SVG, drawn when the report is written: the page needs no script
 * and loads nothing, so it opens offline and from an e-mail attachment alike. Each mark carries
 * its figures in `data-*` attributes and a `<title>` tooltip.
 */

const WIDTH = 640;
const HEIGHT = 260;
const MARGIN = { top: 12, right: 16, bottom: 40, left: 60 };
const PLOT_W = WIDTH - MARGIN.left - MARGIN.right;
const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The smallest 1, 2 or 5 × 10^k at or above `rough`. */
export function niceStep(rough: number): number {
  if (!(rough > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(rough));
  for (const factor of [1, 2, 5, 10]) if (factor * power >= rough) return factor * power;
  return 10 * power;
}

/** Round ticks from `min` (rounded down) to the first at or above `max`, about `count` of them. */
export function ticks(min: number, max: number, count = 5): number[] {
  const step = niceStep((max - min) / count || 1);
  const out: number[] = [];
  for (let i = 0; ; i++) {
    const value = Number((Math.floor(min / step) * step + i * step).toPrecision(12));
    out.push(value);
    if (value >= max && out.length >= 2) return out;
  }
}

/** Smallest and largest value, without spreading a long array into arguments. */
function extent(values: readonly number[]): [number, number] {
  let min = Infinity;
  let max = -Infinity;
  for (const value of values) {
    if (value < min) min = value;
    if (value > max) max = value;
  }
  return [min, max];
}

export interface HistogramBin {
  from: number;
  to: number;
  count: number;
}

/** Equal bins of a round width, about `target` of them, covering every value (the last bin includes its end). */
export function histogramBins(values: readonly number[], target = 20): HistogramBin[] {
  if (values.length === 0) return [];
  const [min, max] = extent(values);
  const width = niceStep((max - min) / target || Math.max(1, max / 10));
  const start = Math.floor(min / width) * width;
  const count = Math.floor((max - start) / width) + 1;
  const bins = Array.from({ length: count }, (_, i) => ({ from: start + i * width, to: start + (i + 1) * width, count: 0 }));
  for (const value of values) bins[Math.min(count - 1, Math.floor((value - start) / width))].count++;
  return bins;
}

function frame(label: string, body: string, attributes: string): string {
  return `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeHtml(label)}" ${attributes}>${body}</svg>`;
}

function axes(xTicks: Array<[number, string]>, yTicks: Array<[number, string]>, xLabel: string, yLabel: string): string {
  const parts = [`<line class="axis" x1="${MARGIN.left}" y1="${MARGIN.top + PLOT_H}" x2="${MARGIN.left + PLOT_W}" y2="${MARGIN.top + PLOT_H}"/>`];
  for (const [x, text] of xTicks) parts.push(`<text class="tick" x="${x.toFixed(1)}" y="${MARGIN.top + PLOT_H + 16}" text-anchor="middle">${escapeHtml(text)}</text>`);
  for (const [y, text] of yTicks) {
    parts.push(`<line class="grid" x1="${MARGIN.left}" y1="${y.toFixed(1)}" x2="${MARGIN.left + PLOT_W}" y2="${y.toFixed(1)}"/>`);
    parts.push(`<text class="tick" x="${MARGIN.left - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${escapeHtml(text)}</text>`);
  }
  parts.push(`<text class="label" x="${MARGIN.left + PLOT_W / 2}" y="${HEIGHT - 4}" text-anchor="middle">${escapeHtml(xLabel)}</text>`);
  parts.push(`<text class="label" transform="translate(14 ${MARGIN.top + PLOT_H / 2}) rotate(-90)" text-anchor="middle">${escapeHtml(yLabel)}</text>`);
  return parts.join('');
}

function empty(label: string): string {
  return frame(label, `<text class="label" x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle">no answers to show</text>`, 'data-chart="empty"');
}

/** Bars of how many answers took how long. */
export function histogramSvg(bins: readonly HistogramBin[], format: (ms: number) => string): string {
  const label = 'Response time histogram';
  if (bins.length === 0) return empty(label);
  const yTicks = ticks(0, extent(bins.map((b) => b.count))[1], 4).filter((v) => Number.isInteger(v));
  const yMax = yTicks.at(-1)!;
  const barW = PLOT_W / bins.length;
  const y = (count: number) => MARGIN.top + PLOT_H - (count / yMax) * PLOT_H;
  const bars = bins.map((bin, i) => {
    const top = y(bin.count);
    return (
      `<rect class="bar" data-from="${bin.from}" data-to="${bin.to}" data-count="${bin.count}" x="${(MARGIN.left + i * barW + 1).toFixed(1)}" y="${top.toFixed(1)}" ` +
      `width="${Math.max(1, barW - 2).toFixed(1)}" height="${(MARGIN.top + PLOT_H - top).toFixed(1)}"><title>${escapeHtml(`${format(bin.from)} – ${format(bin.to)}: ${bin.count}`)}</title></rect>`
    );
  });
  const every = Math.ceil((bins.length + 1) / 8);
  const xTicks: Array<[number, string]> = [];
  for (let i = 0; i <= bins.length; i += every) xTicks.push([MARGIN.left + i * barW, format(i < bins.length ? bins[i].from : bins[i - 1].to)]);
  const total = bins.reduce((sum, b) => sum + b.count, 0);
  return frame(label, axes(xTicks, yTicks.map((v) => [y(v), String(v)]), 'response time', 'answers') + bars.join(''), `data-chart="latency-histogram" data-count="${total}"`);
}

export interface TimePoint {
  /** Seconds after the run began, when the answer came. */
  x: number;
  /** Response time, ms. */
  y: number;
  status: string;
  title: string;
}

/** Each question as a dot: when it finished against how long it took, coloured by status. */
export function timeSeriesSvg(points: readonly TimePoint[], format: (ms: number) => string): string {
  const label = 'Response times over the run';
  if (points.length === 0) return empty(label);
  const xTicks = ticks(0, extent(points.map((p) => p.x))[1], 6);
  const yTicks = ticks(0, extent(points.map((p) => p.y))[1], 4);
  const xMax = xTicks.at(-1)!;
  const yMax = yTicks.at(-1)!;
  const px = (x: number) => MARGIN.left + (x / xMax) * PLOT_W;
  const py = (y: number) => MARGIN.top + PLOT_H - (y / yMax) * PLOT_H;
  const dots = points.map(
    (p) => `<circle class="point status-${escapeHtml(p.status)}" data-status="${escapeHtml(p.status)}" cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="3"><title>${escapeHtml(p.title)}</title></circle>`,
  );
  return frame(
    label,
    axes(xTicks.map((v) => [px(v), `${v} s`]), yTicks.map((v) => [py(v), format(v)]), 'seconds into the run', 'response time') + dots.join(''),
    `data-chart="time-series" data-count="${points.length}"`,
  );
}

export interface RateRow {
  label: string;
  passed: number;
  total: number;
}

/** One horizontal bar per category: its pass rate, with passed / total. */
export function passRateSvg(rows: readonly RateRow[]): string {
  const rowH = 26;
  const left = 160;
  const width = WIDTH - left - 110;
  const height = rows.length * rowH + 8;
  const bars = rows.map((row, i) => {
    const rate = row.total === 0 ? 0 : row.passed / row.total;
    const y = 4 + i * rowH;
    return (
      `<g class="rate" data-label="${escapeHtml(row.label)}" data-passed="${row.passed}" data-total="${row.total}">` +
      `<text class="tick" x="${left - 8}" y="${y + 16}" text-anchor="end">${escapeHtml(row.label)}</text>` +
      `<rect class="track" x="${left}" y="${y + 3}" width="${width}" height="${rowH - 8}"/>` +
      `<rect class="bar${rate < 1 ? ' partial' : ''}" x="${left}" y="${y + 3}" width="${(rate * width).toFixed(1)}" height="${rowH - 8}"><title>${escapeHtml(`${row.label}: ${row.passed}/${row.total}`)}</title></rect>` +
      `<text class="tick" x="${left + width + 8}" y="${y + 16}">${row.passed}/${row.total} (${(100 * rate).toFixed(0)}%)</text></g>`
    );
  });
  return `<svg class="chart" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="Pass rate by category" data-chart="pass-rate">${bars.join('')}</svg>`;
}
