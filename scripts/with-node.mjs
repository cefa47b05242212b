/**
 * Runs a command under another Node.js release line than the machine's, fetched from the npm
 * registry: `node scripts/with-node.mjs 24 <node arguments…>` (CI runs the unit project so).
 *
 * The registry's `node` package only installs `node-<platform>-<arch>` in a script; that package
 * holds the official binary itself, so `npm pack` fetches it like any dependency (npm checks its
 * integrity) and no other host is needed. It is kept in node_modules/.cache/dataagent-node/, and
 * its folder goes first on PATH, so `node` and npm's scripts run on it too.
 *
 * `node scripts/with-node.mjs --pinned` prints the pinned versions as JSON and fetches nothing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The release each line runs on, pinned so that CI is repeatable; raise it with the lockfile's updates. */
export const PINNED = { 24: '24.21.0' };

const root = fileURLToPath(new URL('..', import.meta.url));
const cache = path.join(root, 'node_modules', '.cache', 'dataagent-node');

/**
 * The node binary of a pinned version, fetched on first use.
 * @param {string} version e.g. `24.21.0`.
 * @returns {string} Its path.
 * @throws {Error} When npm cannot fetch it or the binary is not that version.
 */
export function nodeBinary(version) {
  const packageName = `node-${process.platform}-${process.arch}`;
  const home = path.join(cache, `${packageName}-${version}`);
  const bin = path.join(home, 'bin', 'node');
  if (existsSync(bin)) return bin;
  mkdirSync(cache, { recursive: true });
  const work = mkdtempSync(path.join(cache, '.fetch-'));
  try {
    console.error(`[with-node] fetching ${packageName}@${version} from the npm registry...`);
    const pack = spawnSync('npm', ['pack', `${packageName}@${version}`, '--pack-destination', work, '--json', '--silent'], { encoding: 'utf8' });
    if (pack.status !== 0) throw new Error(`npm pack ${packageName}@${version} failed: ${pack.stderr.trim() || pack.stdout.trim()}`);
    const [{ filename }] = JSON.parse(pack.stdout);
    // Only the binary: the package's headers and docs are 60 MB more.
    const untar = spawnSync('tar', ['-xzf', path.join(work, filename), '-C', work, '--strip-components=1', 'package/bin/node'], { encoding: 'utf8' });
    if (untar.status !== 0) throw new Error(`cannot unpack ${filename}: ${untar.stderr.trim()}`);
    const fetched = path.join(work, 'bin', 'node');
    const reported = spawnSync(fetched, ['--version'], { encoding: 'utf8' }).stdout?.trim();
    if (reported !== `v${version}`) throw new Error(`${packageName}@${version} holds a node that says "${reported}"`);
    mkdirSync(home, { recursive: true });
    // Whole or not at all: a run that dies halfway leaves no half-written binary behind.
    renameSync(path.join(work, 'bin'), path.join(home, 'bin'));
    return bin;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [line, ...args] = process.argv.slice(2);
  if (line === '--pinned') {
    console.log(JSON.stringify(PINNED));
    process.exit(0);
  }
  const version = PINNED[line];
  if (!version) {
    console.error(`usage: node scripts/with-node.mjs <${Object.keys(PINNED).join('|')}> <node arguments…>`);
    process.exit(2);
  }
  const bin = nodeBinary(version);
  const run = spawnSync(bin, args, { stdio: 'inherit', env: { ...process.env, PATH: `${path.dirname(bin)}${path.delimiter}${process.env.PATH ?? ''}` } });
  process.exit(run.status ?? 1);
}
