/**
 * Line charts for the capacity report, as inline SVG (no script, nothing loaded): figures against
 * concurrent runs, with objectives as horizontal lines and the largest level that held as a
 * vertical one. Ticks and escaping come from harbor's report charts (svg-charts.ts).
 */
import { escapeHtml, ticks } from '../apps/harbor/src/report/svg-charts.js';

const WIDTH = 760;
const HEIGHT = 320;
const MARGIN = { top: 16, right: 150, bottom: 44, left: 64 };
const PLOT_W = WIDTH - MARGIN.left - MARGIN.right;
const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;

export interface Series {
  name: string;
  color: string;
  /** Points with a non-finite y are left out (and break the line there). */
  points: Array<{ x: number; y: number }>;
  dashed?: boolean;
}

export interface GuideLine {
  value: number;
  label: string;
  color: string;
}

export interface LineChartOptions {
  label: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** Horizontal lines (objectives). */
  hLines?: GuideLine[];
  /** Vertical lines (the largest level that held). */
  vLines?: GuideLine[];
  /** A log-10 y axis (latencies that jump by orders of magnitude once a level breaks). */
  yLog?: boolean;
  format?: (y: number) => string;
}

const finite = (n: number) => Number.isFinite(n);

/** Ticks of a log-10 axis: the powers of ten (and 2× and 5× when there are few of them) from `min` to `max`. */
function logTicks(min: number, max: number): number[] {
  const from = Math.floor(Math.log10(min));
  const to = Math.ceil(Math.log10(max));
  const out: number[] = [];
  const steps = to - from <= 2 ? [1, 2, 5] : [1];
  for (let p = from; p <= to; p++) for (const f of steps) if (f * 10 ** p <= 10 ** to) out.push(Number((f * 10 ** p).toPrecision(6)));
  return out;
}

/** A line chart of several series against one numeric x axis. */
export function lineChartSvg(options: LineChartOptions): string {
  const format = options.format ?? ((y: number) => String(y));
  const xs = options.series.flatMap((s) => s.points.map((p) => p.x)).filter(finite);
  const ys = [...options.series.flatMap((s) => s.points.map((p) => p.y)), ...(options.hLines ?? []).map((l) => l.value)].filter((y) => finite(y) && (!options.yLog || y > 0));
  if (xs.length === 0 || ys.length === 0) {
    return `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeHtml(options.label)}"><text x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle">no figures to show</text></svg>`;
  }
  const xTicks = ticks(0, Math.max(...xs), 6);
  const xMax = xTicks.at(-1)!;
  let yTicks: number[];
  let py: (y: number) => number;
  if (options.yLog) {
    yTicks = logTicks(Math.min(...ys), Math.max(...ys));
    const [lo, hi] = [Math.log10(yTicks[0]!), Math.log10(yTicks.at(-1)!)];
    py = (y) => MARGIN.top + PLOT_H - ((Math.log10(y) - lo) / (hi - lo || 1)) * PLOT_H;
  } else {
    yTicks = ticks(0, Math.max(...ys), 5);
    const yMax = yTicks.at(-1)!;
    py = (y) => MARGIN.top + PLOT_H - (y / (yMax || 1)) * PLOT_H;
  }
  const px = (x: number) => MARGIN.left + (x / (xMax || 1)) * PLOT_W;
  const plotted = (y: number) => finite(y) && (!options.yLog || y > 0);

  const parts: string[] = [];
  for (const y of yTicks) {
    parts.push(`<line x1="${MARGIN.left}" y1="${py(y).toFixed(1)}" x2="${MARGIN.left + PLOT_W}" y2="${py(y).toFixed(1)}" stroke="#e3e6ea"/>`);
    parts.push(`<text class="tick" x="${MARGIN.left - 6}" y="${(py(y) + 4).toFixed(1)}" text-anchor="end">${escapeHtml(format(y))}</text>`);
  }
  parts.push(`<line x1="${MARGIN.left}" y1="${MARGIN.top + PLOT_H}" x2="${MARGIN.left + PLOT_W}" y2="${MARGIN.top + PLOT_H}" stroke="#555"/>`);
  parts.push(`<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${MARGIN.top + PLOT_H}" stroke="#555"/>`);
  for (const x of xTicks) parts.push(`<text class="tick" x="${px(x).toFixed(1)}" y="${MARGIN.top + PLOT_H + 16}" text-anchor="middle">${x}</text>`);
  parts.push(`<text class="label" x="${MARGIN.left + PLOT_W / 2}" y="${HEIGHT - 6}" text-anchor="middle">${escapeHtml(options.xLabel)}</text>`);
  parts.push(`<text class="label" transform="translate(16 ${MARGIN.top + PLOT_H / 2}) rotate(-90)" text-anchor="middle">${escapeHtml(options.yLabel)}</text>`);

  for (const line of options.hLines ?? []) {
    if (!plotted(line.value)) continue;
    const y = py(line.value).toFixed(1);
    parts.push(
      `<g data-objective="${escapeHtml(line.label)}"><line x1="${MARGIN.left}" y1="${y}" x2="${MARGIN.left + PLOT_W}" y2="${y}" stroke="${line.color}" stroke-width="1.5" stroke-dasharray="6 4"/>` +
        `<text class="tick" x="${MARGIN.left + PLOT_W - 4}" y="${(Number(y) - 5).toFixed(1)}" text-anchor="end" fill="${line.color}">${escapeHtml(line.label)}</text></g>`,
    );
  }
  for (const line of options.vLines ?? []) {
    if (!finite(line.value)) continue;
    const x = px(line.value).toFixed(1);
    parts.push(
      `<g data-marker="${escapeHtml(line.label)}"><line x1="${x}" y1="${MARGIN.top}" x2="${x}" y2="${MARGIN.top + PLOT_H}" stroke="${line.color}" stroke-width="1.5" stroke-dasharray="2 3"/>` +
        // Right of the line, or left of it near the plot's right edge.
        (Number(x) > MARGIN.left + PLOT_W * 0.8
          ? `<text class="tick" x="${(Number(x) - 4).toFixed(1)}" y="${MARGIN.top + 12}" text-anchor="end" fill="${line.color}">${escapeHtml(line.label)}</text></g>`
          : `<text class="tick" x="${(Number(x) + 4).toFixed(1)}" y="${MARGIN.top + 12}" fill="${line.color}">${escapeHtml(line.label)}</text></g>`),
    );
  }
  options.series.forEach((series, i) => {
    const segments: string[][] = [[]];
    const dots: string[] = [];
    for (const point of series.points) {
      if (!plotted(point.y) || !finite(point.x)) {
        segments.push([]);
        continue;
      }
      const [x, y] = [px(point.x).toFixed(1), py(point.y).toFixed(1)];
      segments.at(-1)!.push(`${x},${y}`);
      dots.push(`<circle cx="${x}" cy="${y}" r="3.5" fill="${series.color}" data-x="${point.x}" data-y="${point.y}"><title>${escapeHtml(`${series.name} at ${point.x}: ${format(point.y)}`)}</title></circle>`);
    }
    const dash = series.dashed ? ' stroke-dasharray="5 3"' : '';
    const lines = segments.filter((s) => s.length > 1).map((s) => `<polyline points="${s.join(' ')}" fill="none" stroke="${series.color}" stroke-width="2"${dash}/>`);
    const ly = MARGIN.top + 8 + i * 18;
    const legend =
      `<line x1="${MARGIN.left + PLOT_W + 14}" y1="${ly}" x2="${MARGIN.left + PLOT_W + 36}" y2="${ly}" stroke="${series.color}" stroke-width="2"${dash}/>` +
      `<text class="tick" x="${MARGIN.left + PLOT_W + 42}" y="${ly + 4}">${escapeHtml(series.name)}</text>`;
    parts.push(`<g data-series="${escapeHtml(series.name)}">${lines.join('')}${dots.join('')}${legend}</g>`);
  });
  return `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeHtml(options.label)}">${parts.join('')}</svg>`;
}
