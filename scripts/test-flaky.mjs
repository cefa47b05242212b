// Runs chosen e2e files many times with the machine loaded, and prints pass counts per file:
// the proof that a flake is gone, or the way to catch one.
//
//   npm run test:flaky -- [--runs N] [--load FILE ... --] file ...
//
// Two lanes run at once, each a jest process in band with its own Redis and MariaDB, as in
// `npm test`. The first lane runs the chosen files N times (default 20), one jest per round.
// The second is the load beside it: it runs the --load files (default: the chosen files again)
// round after round until the first lane is done; its results count too, reported apart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensureTestPackages } from '../test/support/global-setup.mjs';
import { root, runJest } from './jest-lane.mjs';

const argv = process.argv.slice(2);
const valueOf = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const runs = Number(valueOf('--runs') ?? 20);
const files = [];
const load = [];
for (let i = 0, into = files; i < argv.length; i++) {
  if (argv[i] === '--runs') i++;
  else if (argv[i] === '--load') into = load;
  else if (argv[i] === '--') into = files;
  else if (argv[i].startsWith('--')) throw new Error(`test:flaky: unknown option ${argv[i]}`);
  else into.push(path.relative(root, path.resolve(argv[i])));
}
if (files.length === 0 || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: npm run test:flaky -- [--runs N] [--load FILE ...] file ...');
  process.exit(2);
}
const loadFiles = load.length > 0 ? load : files;

await ensureTestPackages();
const resultsDir = mkdtempSync(path.join(tmpdir(), 'dataagent-flaky-'));
/** Per file and lane: passes, runs, and the first failure's test names. */
const tally = new Map();
const count = (lane, run) => {
  for (const result of run.results.testResults) {
    const key = `${lane}\t${path.relative(root, result.name)}`;
    const entry = tally.get(key) ?? { passed: 0, runs: 0, failures: [] };
    entry.runs++;
    if (result.status === 'passed') entry.passed++;
    else entry.failures.push(...result.assertionResults.filter((a) => a.status === 'failed').map((a) => a.fullName));
    tally.set(key, entry);
  }
  if (run.results.crashed) console.log(`[${lane}] jest wrote no results (exit ${run.code}):\n${run.output.slice(-40).join('\n')}`);
};

const started = Date.now();
let measuring = true;
const loadLane = (async () => {
  for (let round = 1; measuring; round++) {
    const run = await runJest(`load-${round}`, loadFiles, resultsDir, { quiet: true });
    count('load', run);
  }
})();
for (let round = 1; round <= runs; round++) {
  const run = await runJest(`run-${round}`, files, resultsDir, { quiet: true });
  count('measured', run);
  const failed = run.results.testResults.filter((r) => r.status !== 'passed').map((r) => path.basename(r.name));
  console.log(`round ${round}/${runs}: ${failed.length === 0 && !run.results.crashed ? 'passed' : `FAILED ${failed.join(', ')}`} (${Math.round(run.seconds)} s)`);
  if (failed.length > 0) console.log(run.output.filter((line) => /●|Expected|Received|Error/.test(line)).slice(0, 30).join('\n'));
}
measuring = false;
await loadLane;
rmSync(resultsDir, { recursive: true, force: true });

console.log(`\ntest:flaky: ${runs} rounds in ${Math.round((Date.now() - started) / 1000)} s, beside a second lane running ${loadFiles.length} file(s)`);
let flaky = false;
for (const [key, { passed, runs: total, failures }] of [...tally].sort()) {
  const [lane, file] = key.split('\t');
  console.log(`  ${lane.padEnd(8)} ${file.padEnd(44)} ${passed}/${total}${failures.length > 0 ? `  failed: ${[...new Set(failures)].join('; ')}` : ''}`);
  if (passed < total) flaky = true;
}
process.exit(flaky ? 1 : 0);
