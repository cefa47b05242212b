/**
 * Checks that no installed package refuses a Node.js version DataAgent claims to run on.
 *
 * The claim is package.json's `engines.node`, one release line per `||` part
 * (`^20.19.0 || ^22.13.0 || ^24.11.0`). Every package under node_modules, production or dev,
 * nested or not, must admit every version of every line: its own `engines.node` has to contain
 * the whole line, or npm warns EBADENGINE there and the package may not work.
 *
 * `node scripts/check-engines.mjs` prints each refusal and exits 1; it exits 0 when there is none.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';

/**
 * The release lines a Node.js `engines` range claims, one per `||` part.
 * @param {string} range package.json's `engines.node`.
 * @returns {string[]} Each part as a range of its own (`^20.19.0`).
 * @throws {Error} When the range is not one semver understands.
 */
export function claimedLines(range) {
  const lines = range.split('||').map((line) => line.trim());
  const bad = lines.find((line) => !semver.validRange(line));
  if (bad !== undefined) throw new Error(`engines.node "${range}": "${bad}" is not a semver range`);
  return lines;
}

/**
 * Every package installed under a node_modules folder, nested ones included.
 * @param {string} nodeModules The folder to walk.
 * @returns {Generator<{ dir: string, manifest: Record<string, any> }>} Each package's folder and package.json.
 */
export function* installedPackages(nodeModules) {
  if (!existsSync(nodeModules)) return;
  for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
    // .bin holds links, .cache and .package-lock.json are npm's and tools' own.
    if (entry.name.startsWith('.')) continue;
    const dir = path.join(nodeModules, entry.name);
    if (entry.name.startsWith('@')) {
      if (entry.isDirectory()) yield* installedPackages(dir);
      continue;
    }
    if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
    const manifestPath = path.join(dir, 'package.json');
    if (!existsSync(manifestPath)) continue;
    yield { dir, manifest: JSON.parse(readFileSync(manifestPath, 'utf8')) };
    yield* installedPackages(path.join(dir, 'node_modules'));
  }
}

/**
 * The installed packages whose `engines.node` leaves out part of a claimed line.
 * @param {string} root The project folder (its package.json and node_modules).
 * @returns {{ claimed: string, lines: string[], packages: number, refusals: { name: string, version: string, where: string, wants: string, refuses: string[] }[] }}
 *   What was claimed, how many packages were read, and each refusal with the lines it refuses.
 */
export function findRefusals(root) {
  const claimed = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).engines?.node;
  if (typeof claimed !== 'string') throw new Error(`${path.join(root, 'package.json')} declares no engines.node`);
  const lines = claimedLines(claimed);
  const refusals = [];
  let packages = 0;
  for (const { dir, manifest } of installedPackages(path.join(root, 'node_modules'))) {
    packages += 1;
    const wants = manifest.engines?.node;
    if (typeof wants !== 'string') continue;
    // npm reads an engines range that semver cannot parse as one no version satisfies.
    const refuses = semver.validRange(wants) ? lines.filter((line) => !semver.subset(line, wants)) : lines;
    if (refuses.length > 0) {
      refusals.push({ name: manifest.name, version: manifest.version, where: path.relative(root, dir), wants, refuses });
    }
  }
  return { claimed, lines, packages, refusals };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = path.resolve(process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url)));
  const { claimed, packages, refusals } = findRefusals(root);
  for (const r of refusals) {
    console.log(`${r.name}@${r.version} (${r.where}) wants node ${r.wants}: refuses ${r.refuses.join(', ')}`);
  }
  console.log(`${packages} installed packages checked against engines.node "${claimed}": ${refusals.length} refuse part of it`);
  process.exit(refusals.length > 0 ? 1 : 0);
}
