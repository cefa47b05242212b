import { spawnSync } from 'node:child_process';

/**
 * What `promtool check metrics` says about a scrape: its exit status (0 when Prometheus's
 * linter finds nothing) and what it printed. The harness puts promtool in place
 * (scripts/local-services.mjs `ensurePromtool`) and names it in DATAAGENT_TEST_PROMTOOL.
 */
export function checkMetrics(text: string): { status: number | null; output: string } {
  const result = spawnSync(process.env.DATAAGENT_TEST_PROMTOOL ?? 'promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (result.error) throw result.error;
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}
