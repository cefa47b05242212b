import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

export interface BundleRunOptions {
  /**
   * Where compiled code is kept between starts: a folder of this process's user that nobody else
   * may write (a cache another user could write would run their code here). Default
   * `$XDG_CACHE_HOME/dataagent/compiled` or `~/.cache/dataagent/compiled`; null: no cache.
   */
  cacheDir?: string | null;
  /** How long after the start the compiled code is saved: by then the start's functions are compiled too. */
  saveAfterMs?: number;
}

/** What a run of a bundle did with its cache: `used` (accepted by V8), `rejected` (stale, rewritten), `none` (no cache yet, or none usable). */
export type CacheUse = 'used' | 'rejected' | 'none';

/**
 * Runs a CommonJS bundle (dist/gateway.cjs, dist/worker.cjs) with V8's code cache: the first
 * start saves the compiled code, later ones skip most of the parsing and compiling. Node 20 has no
 * compile cache of its own, and parsing a bundle of ~15 MB costs a process about half a second of
 * CPU at every start. The bundle makes no import() (scripts/bundle.mjs turns each into a
 * require()): a script run this way has no ES module loader behind it.
 * @returns what became of the cache.
 */
export function runBundle(bundle: string | URL, options: BundleRunOptions = {}): CacheUse {
  const file = typeof bundle === 'string' ? bundle : fileURLToPath(bundle);
  const source = readFileSync(file, 'utf8');
  const cacheDir = options.cacheDir === undefined ? defaultCacheDir() : options.cacheDir;
  // V8 checks only the source's length (and its own version and flags): the key is the source's hash.
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const cacheFile = cacheDir ? join(cacheDir, `${basename(file)}-${hash}-${process.version}-${process.arch}.v8`) : undefined;
  const cachedData = cacheFile && ownedFolder(cacheDir!) ? readIfThere(cacheFile) : undefined;
  // One line, so the bundle's line numbers stay as they are.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
  });
  const use: CacheUse = !cachedData ? 'none' : script.cachedDataRejected ? 'rejected' : 'used';
  const module = { exports: {}, filename: file, id: file, loaded: false };
  const run = script.runInThisContext() as (exports: object, require: NodeJS.Require, module: object, filename: string, dirname: string) => void;
  run(module.exports, createRequire(file), module, file, dirname(file));
  if (cacheFile && use !== 'used') {
    setTimeout(() => save(cacheDir!, cacheFile, script, `${basename(file)}-`), options.saveAfterMs ?? 5_000).unref();
  }
  return use;
}

function defaultCacheDir(): string | null {
  const base = process.env.XDG_CACHE_HOME || (homedir() ? join(homedir(), '.cache') : '');
  return base ? join(base, 'dataagent', 'compiled') : null;
}

/** Whether the folder is this user's and nobody else may write it (created so, when missing). */
function ownedFolder(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = statSync(dir);
    return stat.isDirectory() && stat.uid === process.getuid?.() && (stat.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/** The cache file's bytes, if it is this user's own and nobody else may write it (checked on the file opened, not on its name). */
function readIfThere(file: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.uid !== process.getuid?.() || (stat.mode & 0o022) !== 0) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Written beside and renamed over: processes starting together never read half a cache. Earlier builds' caches go. */
function save(dir: string, file: string, script: Script, prefix: string): void {
  try {
    if (!ownedFolder(dir)) return;
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, script.createCachedData(), { mode: 0o600 });
    renameSync(partial, file);
    for (const name of readdirSync(dir)) {
      if (name.startsWith(prefix) && name.endsWith('.v8') && join(dir, name) !== file) unlinkSync(join(dir, name));
    }
  } catch {
    // A cache that cannot be written only means the next start compiles again.
  }
}
