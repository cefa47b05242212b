import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat } from './support/event-waits.js';
import { FAULT_SERVER, killRecordedServers } from './support/mcp-fault-servers.js';
import { checkMetrics } from './support/promtool.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

const DASHBOARD = new URL('../deploy/grafana/dataagent.json', import.meta.url);

/** The metric names a scrape exports: each family from its `# TYPE` line, a histogram's or summary's series too. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name! + suffix);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(name! + suffix);
  }
  return names;
}

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression reads: what is left once strings, label matchers, ranges,
 * grouping clauses, function calls, keywords and numbers are taken out.
 */
export function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(/(?<![\w$.])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    if (match[2] || PROMQL_WORDS.has(match[1]!.toLowerCase())) continue;
    names.add(match[1]!);
  }
  return [...names];
}

interface Panel {
  title?: string;
  targets?: Array<{ expr?: string }>;
  panels?: Panel[];
}

/** Every PromQL query of the dashboard, with the title of its panel. */
function dashboardQueries(): Array<{ panel: string; expr: string }> {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] };
  const queries: Array<{ panel: string; expr: string }> = [];
  const walk = (panels: Panel[]) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) if (target.expr) queries.push({ panel: panel.title ?? '', expr: target.expr });
      walk(panel.panels ?? []);
    }
  };
  walk(dashboard.panels);
  return queries;
}

/**
 * The gateway's `/metrics` and a worker's metrics port, scraped after real traffic (a chat with
 * a built-in tool call and one with an MCP call), pass Prometheus's own linter, and the Grafana
 * dashboard in deploy/grafana reads only metrics the two export.
 */
describe('metrics, as Prometheus reads them', () => {
  let system: TestSystem;
  let dir: string;
  let gateway: string;
  let worker: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-promtool-'));
    const file = join(dir, 'mcp.json');
    writeFileSync(file, JSON.stringify({ servers: [{ name: 'shop', command: process.execPath, args: [FAULT_SERVER, 'shop', '--record', join(dir, 'shop.jsonl')] }] }));
    // A tenant run limit, so each chat takes a tenant run slot and the gateway counts it.
    system = await TestSystem.start({ env: { DATAAGENT_SANDBOX: 'none', DATAAGENT_MCP_CONFIG: file, DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT: '5' } });
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const todo = await sendChat(socket, { message: '[[chunks:3]] [[tool:write_todos {"todos":[{"content":"lint","status":"pending"}]}]]' });
      await events.done(todo.run_id);
      const mcp = await sendChat(socket, { message: '[[tool:shop__get_order {"orderId":"T-1"}]]' });
      await events.done(mcp.run_id);
    } finally {
      socket.disconnect();
    }
    [gateway, worker] = await Promise.all([fetch(`${system.url}/metrics`).then((r) => r.text()), fetch(system.workers[0]!.metricsUrl!).then((r) => r.text())]);
  });
  afterAll(async () => {
    await system?.stop();
    if (dir) {
      killRecordedServers(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("passes promtool check metrics on the gateway's and the worker's scrape", () => {
    // The scrapes hold the traffic's series, so the linter sees labelled histograms and counters too.
    expect(gateway).toMatch(/^dataagent_runs_queued_total 2$/m);
    expect(gateway).toMatch(/^dataagent_tenant_run_slot_requests_total\{result="granted"\} 2$/m);
    expect(worker).toMatch(/^dataagent_mcp_call_duration_seconds_count\{.*status="ok".*\} 1$/m);
    expect(worker).toMatch(/^dataagent_mcp_connections\{server="shop",status="connected"\} 1$/m);
    // The scripted model reports each call's usage: tokens and cost by model.
    expect(worker).toMatch(/^dataagent_model_tokens_total\{model="[^"]+",kind="input"\} [1-9]\d*$/m);
    // Both at once, so a failure shows what promtool said about each.
    expect({ gateway: checkMetrics(gateway), worker: checkMetrics(worker) }).toEqual({ gateway: { status: 0, output: '' }, worker: { status: 0, output: '' } });
  });

  it('has a dashboard whose every query reads metrics the gateway or the worker exports', () => {
    const exported = new Set([...exportedNames(gateway), ...exportedNames(worker)]);
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThan(10);
    const read = new Set(queries.flatMap((q) => metricNamesIn(q.expr)));
    // What an operator watches: runs, queue depth, latencies, errors, MCP health, tenant run slots, model usage.
    for (const name of ['dataagent_runs_active', 'dataagent_runs_finished_total', 'bullmq_jobs', 'dataagent_run_start_delay_seconds_bucket', 'dataagent_event_delivery_seconds_bucket', 'dataagent_cancel_latency_seconds_bucket', 'dataagent_mcp_call_duration_seconds_count', 'dataagent_mcp_connections', 'dataagent_tenant_run_slot_requests_total', 'dataagent_model_tokens_total', 'dataagent_model_cost_total']) {
      expect(read).toContain(name);
    }
    const unknown = queries.flatMap((q) => metricNamesIn(q.expr).filter((name) => !exported.has(name)).map((name) => `${q.panel}: ${name}`));
    expect(unknown).toEqual([]);
  });

  it('reads metric names out of PromQL, not functions, labels or keywords', () => {
    expect(metricNamesIn('histogram_quantile(0.95, sum by (le, stage) (rate(dataagent_cancel_latency_seconds_bucket{stage=~"queued|running"}[$__rate_interval])))')).toEqual(['dataagent_cancel_latency_seconds_bucket']);
    expect(metricNamesIn('sum(rate(a_total{x="b c"}[5m])) / ignoring(status) group_left sum without (le) (b_count offset 1h) or vector(0)')).toEqual(['a_total', 'b_count']);
  });
});
