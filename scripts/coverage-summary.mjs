// Prints line and branch coverage per library and app from jest's json-summary report, and
// fails when a library is below its floor (the seed asks for 80 % of lines in the core).
//   node scripts/coverage-summary.mjs [coverage/coverage-summary.json]
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Lines each library must cover, in per cent. */
const FLOORS = { 'libs/core': 80 };

const file = process.argv[2] ?? 'coverage/coverage-summary.json';
const summary = JSON.parse(readFileSync(file, 'utf8'));
const root = process.cwd();
const groups = new Map();
for (const [source, figures] of Object.entries(summary)) {
  if (source === 'total') continue;
  const [top, name] = path.relative(root, source).split(path.sep);
  const group = `${top}/${name}`;
  const sum = groups.get(group) ?? { lines: { covered: 0, total: 0 }, branches: { covered: 0, total: 0 } };
  for (const kind of ['lines', 'branches']) {
    sum[kind].covered += figures[kind].covered;
    sum[kind].total += figures[kind].total;
  }
  groups.set(group, sum);
}

const pct = ({ covered, total }) => (total === 0 ? 100 : (100 * covered) / total);
const failures = [];
console.log('\ncoverage (unit tests)      lines   branches');
for (const [group, sum] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
  const lines = pct(sum.lines);
  const floor = FLOORS[group];
  const mark = floor === undefined ? '' : lines >= floor ? `  (floor ${floor} %)` : `  BELOW the ${floor} % floor`;
  console.log(`  ${group.padEnd(22)} ${lines.toFixed(1).padStart(6)} % ${pct(sum.branches).toFixed(1).padStart(7)} %${mark}`);
  if (floor !== undefined && lines < floor) failures.push(group);
}
for (const group of Object.keys(FLOORS)) if (!groups.has(group)) failures.push(`${group} (no figures)`);
if (failures.length > 0) {
  console.error(`coverage: ${failures.join(', ')} below the floor`);
  process.exit(1);
}
