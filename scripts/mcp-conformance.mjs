// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, client mode)
// against DataAgent's MCP client: the workers' connection and sign-in code, through
// test/conformance/mcp-client-driver.ts. Prints a line per scenario and a summary; exits
// non-zero on an unexpected failure, or when a scenario listed in
// test/conformance/mcp-client-expected-failures.yml passes.
//
// The suite needs Node.js 22 or later. When this Node is older, Node 22 comes from the npm
// registry (the `node` package) into the same cache folder as the suite.
//
//   npm run conformance:mcp                       every client scenario
//   npm run conformance:mcp -- --scenario auth/scope-step-up
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CONFORMANCE_VERSION = '0.1.16';
const NODE_LINE = '22';
const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * The suite and a Node.js to run it, installed once into `~/.cache/dataagent/mcp-conformance`.
 * @returns the paths of the suite's CLI and of the node binary to run it (and the driver) with.
 */
export function ensureConformanceSuite({ log = (line) => process.stderr.write(`${line}\n`), cacheDir } = {}) {
  const dir = cacheDir ?? path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'dataagent', 'mcp-conformance');
  const cli = path.join(dir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  const ownNodeWillDo = Number(process.versions.node.split('.')[0]) >= Number(NODE_LINE);
  const nodeBin = ownNodeWillDo ? process.execPath : path.join(dir, 'node_modules', 'node', 'bin', 'node');
  const installed = () => {
    try {
      const version = JSON.parse(readFileSync(path.join(dir, 'node_modules', '@modelcontextprotocol', 'conformance', 'package.json'), 'utf8')).version;
      return version === CONFORMANCE_VERSION && existsSync(nodeBin);
    } catch {
      return false;
    }
  };
  if (!installed()) {
    log(`[conformance] installing @modelcontextprotocol/conformance@${CONFORMANCE_VERSION}${ownNodeWillDo ? '' : ` and Node.js ${NODE_LINE}`} into ${dir}`);
    mkdirSync(dir, { recursive: true });
    // The `node` package fetches its platform's binary from the registry in its install script.
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'dataagent-mcp-conformance', private: true, allowScripts: { node: true } }, null, 2));
    const packages = [`@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}`, ...(ownNodeWillDo ? [] : [`node@${NODE_LINE}`])];
    const result = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...packages], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
    if (result.status !== 0 || !installed()) throw new Error(`could not install the conformance suite into ${dir}`);
  }
  return { cli, nodeBin };
}

/** The suite's client scenarios, as its `list --client` names them. */
function clientScenarios(cli, nodeBin) {
  const listed = spawnSync(nodeBin, [cli, 'list', '--client'], { encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`the suite could not list its scenarios: ${listed.stderr}`);
  return [...listed.stdout.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]);
}

/** The scenarios test/conformance/mcp-client-expected-failures.yml names (its `client:` list). */
function expectedFailures() {
  const text = readFileSync(path.join(root, 'test', 'conformance', 'mcp-client-expected-failures.yml'), 'utf8');
  return new Set([...text.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]));
}

/**
 * Runs the scenarios one at a time (the suite's own `--suite` runs them all at once, and on a
 * small machine the timing scenarios then fail for load alone) and prints one line each.
 * @returns whether every scenario did as expected.
 */
export function runConformance({ only, log = (line) => process.stdout.write(`${line}\n`) } = {}) {
  const { cli, nodeBin } = ensureConformanceSuite();
  const driver = path.join(root, 'dist', 'test', 'conformance', 'mcp-client-driver.js');
  if (!existsSync(driver)) throw new Error(`${driver} is missing: run npm run build`);
  const expected = expectedFailures();
  const scenarios = only ? [only] : clientScenarios(cli, nodeBin);
  const outputDir = path.join(os.tmpdir(), 'dataagent-mcp-conformance');
  log(`MCP conformance ${CONFORMANCE_VERSION}, client mode: ${scenarios.length} scenarios through ${path.relative(root, driver)}`);
  const results = [];
  for (const scenario of scenarios) {
    const run = spawnSync(nodeBin, [cli, 'client', '--command', `${nodeBin} ${driver}`, '--scenario', scenario, '--timeout', '60000', '--output-dir', outputDir], { cwd: root, encoding: 'utf8' });
    const text = `${run.stdout}\n${run.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
    const counts = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(text);
    const passed = run.status === 0 && counts !== null && counts[3] === '0' && counts[4] === '0';
    const failures = [...text.matchAll(/^\s+- (.+)$/gm)].map((m) => m[1]).filter((line) => !line.startsWith('http'));
    results.push({ scenario, passed, expected: expected.has(scenario) });
    const figures = counts ? `${counts[1]}/${counts[2]} checks, ${counts[3]} failed, ${counts[4]} warnings` : `exited ${run.status}`;
    const mark = passed ? '✓' : expected.has(scenario) ? '~' : '✗';
    log(`${mark} ${scenario}: ${figures}${passed ? '' : expected.has(scenario) ? ' (expected failure)' : ''}`);
    if (!passed && !expected.has(scenario)) for (const line of failures.slice(0, 5)) log(`    ${line}`);
  }
  const unexpected = results.filter((r) => !r.passed && !r.expected);
  const stale = results.filter((r) => r.passed && r.expected);
  log(`\n${results.filter((r) => r.passed).length} of ${results.length} scenarios pass; ${results.filter((r) => !r.passed && r.expected).length} expected failures`);
  for (const r of stale) log(`stale: ${r.scenario} passes but is listed in mcp-client-expected-failures.yml`);
  if (unexpected.length > 0) log(`unexpected failures: ${unexpected.map((r) => r.scenario).join(', ')}`);
  return unexpected.length === 0 && stale.length === 0;
}

function main() {
  const args = process.argv.slice(2);
  const at = args.indexOf('--scenario');
  process.exit(runConformance({ only: at >= 0 ? args[at + 1] : undefined }) ? 0 : 1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
