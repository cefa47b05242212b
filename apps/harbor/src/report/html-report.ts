import type { HarborReport } from './harbor-report.js';
import type { LatencyStats } from './stats.js';
import { escapeHtml, histogramBins, histogramSvg, passRateSvg, timeSeriesSvg, type TimePoint } from './svg-charts.js';
import { formatMs, formatPercent } from './terminal-summary.js';

/** Dots drawn in the time series at most; a longer run shows an even sample of its questions. */
const MAX_POINTS = 5_000;
/** Rows of the per-question table at most; report.json has every result. */
const MAX_ROWS = 2_000;

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
main{max-width:1080px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
.meta{color:#5b6475;margin:0 0 16px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(140px,1fr));gap:10px}
.card{background:#fff;border:1px solid #e1e4ea;border-radius:8px;padding:10px 12px}
.card b{display:block;font-size:20px}.card span{color:#5b6475;font-size:12px}
.chart{width:100%;max-width:760px;background:#fff;border:1px solid #e1e4ea;border-radius:8px}
.axis{stroke:#8a93a5}.grid{stroke:#eceef2}.tick{font-size:11px;fill:#5b6475}.label{font-size:12px;fill:#5b6475}
.bar{fill:#3b7ddd}.bar.partial{fill:#e08a2e}.track{fill:#eceef2}
.point{fill-opacity:.75}.status-passed{fill:#2e9d5b}.status-failed{fill:#e08a2e}.status-error{fill:#d64545}.status-timeout{fill:#8a4fd6}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #e1e4ea}
th,td{padding:5px 8px;border-bottom:1px solid #eceef2;text-align:left;vertical-align:top}
th{background:#f0f2f5;font-weight:600}td.num{text-align:right;white-space:nowrap}
.s-passed{color:#2e9d5b}.s-failed{color:#c06d14}.s-error{color:#d64545}.s-timeout{color:#8a4fd6}
details summary{cursor:pointer;color:#3b7ddd}pre{white-space:pre-wrap;margin:4px 0;max-width:520px}
.legend span{margin-right:12px}
`;

function card(value: string, label: string, key: string): string {
  return `<div class="card" data-figure="${key}"><b>${escapeHtml(value)}</b><span>${escapeHtml(label)}</span></div>`;
}

function latencyCards(prefix: string, stats: LatencyStats | null, label: string): string[] {
  if (!stats) return [];
  return (['mean', 'p50', 'p95', 'p99'] as const).map((key) => card(formatMs(stats[key]), `${label} ${key}`, `${prefix}.${key}`));
}

/**
 * `report.html`: one file with its styles and charts inline (SVG, no script), so it opens
 * anywhere, offline included.
 */
export function renderHtmlReport(report: HarborReport): string {
  const { summary, config, run } = report;
  const answered = report.results.filter((r) => r.status === 'passed' || r.status === 'failed');
  const step = Math.ceil(report.results.length / MAX_POINTS);
  const points: TimePoint[] = report.results
    .filter((_, i) => i % step === 0)
    .map((r) => ({
      x: (r.offset_ms + r.total_ms) / 1000,
      y: r.total_ms,
      status: r.status,
      title: `${r.question_id} #${r.iteration} ${r.status} ${formatMs(r.total_ms)}`,
    }));
  const categories = Object.entries(summary.by_category).map(([label, group]) => ({ label, passed: group.passed, total: group.total }));

  const cards = [
    card(formatPercent(summary.pass_rate), `passed (${summary.passed} of ${summary.total})`, 'pass_rate'),
    card(String(summary.failed), 'failed', 'failed'),
    card(String(summary.error), 'errors', 'error'),
    card(String(summary.timeout), 'timeouts', 'timeout'),
    ...latencyCards('total_ms', summary.total_ms, 'response'),
    ...latencyCards('ttft_ms', summary.ttft_ms, 'first token'),
    card(`${run.throughput_per_s.toFixed(1)}/s`, `over ${formatMs(run.duration_ms)}`, 'throughput'),
  ];

  const failures = report.failures.length === 0
    ? '<p>None.</p>'
    : `<table id="failures"><tr><th>question</th><th>pass</th><th>category</th><th>status</th><th>reason</th></tr>${report.failures
        .map((f) => `<tr><td>${escapeHtml(f.question_id)}</td><td class="num">${f.iteration}</td><td>${escapeHtml(f.category)}</td><td class="s-${f.status}">${f.status}</td><td>${escapeHtml(f.reason ?? '')}</td></tr>`)
        .join('')}</table>`;

  const rows = report.results
    .slice(0, MAX_ROWS)
    .map(
      (r) =>
        `<tr data-status="${r.status}"><td>${escapeHtml(r.question_id)}</td><td class="num">${r.iteration}</td><td>${escapeHtml(r.category)}</td><td>${escapeHtml(r.difficulty)}</td>` +
        `<td class="s-${r.status}">${r.status}</td><td class="num">${r.ttft_ms === null ? '–' : formatMs(r.ttft_ms)}</td><td class="num">${formatMs(r.total_ms)}</td>` +
        `<td class="num">${r.keywords_matched.length}/${r.keywords_matched.length + r.keywords_missing.length}</td><td>${r.pattern_matched === null ? '–' : r.pattern_matched ? 'yes' : 'no'}</td>` +
        `<td><details><summary>${escapeHtml(r.question.slice(0, 60))}${r.question.length > 60 ? '…' : ''}</summary><pre>${escapeHtml(r.question)}</pre><b>answer</b><pre>${escapeHtml(r.answer)}</pre>` +
        `${r.reason ? `<b>reason</b><pre>${escapeHtml(r.reason)}</pre>` : ''}</details></td></tr>`,
    )
    .join('');

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Harbor report: ${escapeHtml(report.question_set.name)} over ${config.mode}</title><style>${STYLE}</style></head>
<body><main>
<h1>Harbor report: ${escapeHtml(report.question_set.name)}</h1>
<p class="meta">${summary.total} questions over <b>${config.mode}</b> at concurrency ${config.concurrency} against ${escapeHtml(config.server)} · started ${escapeHtml(run.started_at)} · ${formatMs(run.duration_ms)}${run.interrupted ? ' · <b>interrupted</b>' : ''}</p>
<section class="cards">${cards.join('')}</section>
<h2>Response time histogram</h2>
${histogramSvg(histogramBins(answered.map((r) => r.total_ms)), formatMs)}
<h2>Response times over the run</h2>
<p class="legend"><span class="s-passed">● passed</span><span class="s-failed">● failed</span><span class="s-error">● error</span><span class="s-timeout">● timeout</span>${step > 1 ? ` (every ${step}th question shown)` : ''}</p>
${timeSeriesSvg(points, formatMs)}
<h2>Pass rate by category</h2>
${passRateSvg(categories)}
<h2>Failures (${report.failures.length})</h2>
${failures}
<h2>Every question</h2>
${report.results.length > MAX_ROWS ? `<p>The first ${MAX_ROWS} of ${report.results.length}; report.json has them all.</p>` : ''}
<table id="results"><tr><th>question</th><th>pass</th><th>category</th><th>difficulty</th><th>status</th><th>first token</th><th>total</th><th>keywords</th><th>pattern</th><th>text</th></tr>${rows}</table>
</main></body></html>
`;
}
