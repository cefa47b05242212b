// Runs the e2e project in lanes: two jest processes at once, each with its own Redis and MariaDB
// (its own global setup), the files split between them by their recorded durations; then the
// files that measure latency or load the machine on purpose, alone, one after another.
//
//   node scripts/test-e2e-lanes.mjs [--lanes N] [--record] [--beside SCRIPT ...] [file ...]
//
// --record writes each file's duration to test/support/e2e-durations.json (the split's weights).
// --beside runs an npm script (the unit project, say) at a lower CPU priority beside the lanes:
// the lanes wait on servers and timers for about a fifth of their time, and the script fills it.
// It ends before the files that run alone, and its failure fails the whole.
// A file that must not share the machine says so in its first lines: `// e2e lane: alone (why)`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensureTestPackages } from '../test/support/global-setup.mjs';
import { jestArgs, root, runJest, runPrefixed } from './jest-lane.mjs';

const durationsFile = path.join(root, 'test/support/e2e-durations.json');

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const laneCount = Number(argv[argv.indexOf('--lanes') + 1]) || 2;
const beside = argv.filter((_, i) => argv[i - 1] === '--beside');
const chosen = argv.filter((arg, i) => !arg.startsWith('--') && argv[i - 1] !== '--lanes' && argv[i - 1] !== '--beside');

/** The e2e project's files, as jest finds them, relative to the repository. */
function listFiles() {
  const listed = spawnSync(process.execPath, [...jestArgs, '--selectProjects', 'e2e', '--listTests', '--json'], { cwd: root, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`jest --listTests failed:\n${listed.stderr}`);
  return JSON.parse(listed.stdout.slice(listed.stdout.indexOf('['))).map((file) => path.relative(root, file)).sort();
}

const alone = (file) => /^\/\/ e2e lane: alone\b/m.test(readFileSync(path.join(root, file), 'utf8').split('\n').slice(0, 5).join('\n'));

/** Files split into `count` lanes of about equal recorded time: the longest first, each to the lane with the least so far. */
function split(files, count) {
  let recorded = {};
  try {
    recorded = JSON.parse(readFileSync(durationsFile, 'utf8'));
  } catch {
    // No record yet: every file weighs the same.
  }
  const known = Object.values(recorded).sort((a, b) => a - b);
  const typical = known.length > 0 ? known[Math.floor(known.length / 2)] : 10;
  const lanes = Array.from({ length: count }, () => ({ files: [], seconds: 0 }));
  for (const file of [...files].sort((a, b) => (recorded[b] ?? typical) - (recorded[a] ?? typical))) {
    const lane = lanes.reduce((least, lane) => (lane.seconds < least.seconds ? lane : least));
    lane.files.push(file);
    lane.seconds += recorded[file] ?? typical;
  }
  return lanes;
}

const started = Date.now();
await ensureTestPackages();
const files = chosen.length > 0 ? chosen : listFiles();
const shared = files.filter((file) => !alone(file));
const solo = files.filter(alone);
const lanes = split(shared, Math.min(laneCount, Math.max(1, shared.length)));
const resultsDir = mkdtempSync(path.join(tmpdir(), 'dataagent-lanes-'));
console.log(`e2e: ${shared.length} files in ${lanes.length} lanes (${lanes.map((lane) => `${lane.files.length} files, ~${Math.round(lane.seconds)} s`).join('; ')}), then ${solo.length} alone`);

// One after another, so they compete with the lanes only, not with each other.
const besideRuns = (async () => {
  const done = [];
  for (const script of beside) done.push(await runPrefixed(script, 'nice', ['-n', '10', 'npm', 'run', '--silent', script]));
  return done;
})();
const runs = await Promise.all(lanes.filter((lane) => lane.files.length > 0).map((lane, i) => runJest(`lane ${i + 1}`, lane.files, resultsDir)));
const besideDone = await besideRuns;
for (const file of solo) runs.push(await runJest(`alone ${path.basename(file, '.test.ts')}`, [file], resultsDir));
rmSync(resultsDir, { recursive: true, force: true });

const durations = {};
let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
for (const run of runs) {
  passed += run.results.numPassedTests;
  failed += run.results.numFailedTests;
  skipped += run.results.numPendingTests;
  if (run.code !== 0) failures.push(`${run.label} (exit ${run.code}${run.results.crashed ? ', no results' : ''})`);
  for (const result of run.results.testResults) {
    const file = path.relative(root, result.name);
    durations[file] = Math.round((result.endTime - result.startTime) / 100) / 10;
    if (result.status !== 'passed') failures.push(file);
  }
  console.log(`e2e ${run.label}: ${run.results.numPassedTests} passed, ${run.results.numFailedTests} failed in ${Math.round(run.seconds)} s`);
}
for (const run of besideDone) {
  if (run.code !== 0) failures.push(`${run.label} (exit ${run.code})`);
  console.log(`beside ${run.label}: exit ${run.code} in ${Math.round(run.seconds)} s`);
}
if (flag('--record')) {
  let before = {};
  try {
    before = JSON.parse(readFileSync(durationsFile, 'utf8'));
  } catch {
    // The first record.
  }
  const merged = Object.fromEntries(Object.entries({ ...before, ...durations }).filter(([file]) => chosen.length > 0 || files.includes(file)).sort());
  writeFileSync(durationsFile, `${JSON.stringify(merged, null, 2)}\n`);
  console.log(`e2e: durations recorded in ${path.relative(root, durationsFile)}`);
}
console.log(`e2e: ${Math.round((Date.now() - started) / 1000)} s in all${failures.length > 0 ? `; failed: ${[...new Set(failures)].join(', ')}` : ''}`);
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(failures.length > 0 || failed > 0 ? 1 : 0);
