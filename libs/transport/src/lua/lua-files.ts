import { readFileSync } from 'node:fs';

/**
 * The text of `<name>.lua` beside this module, or undefined when there is none. Only
 * lua-scripts.ts calls this: run from the sources (jest) the files are the sources'; run from
 * tsc's output, the copies scripts/bundle.mjs puts beside it in dist/. In the bundles
 * (dist/gateway.cjs, dist/worker.cjs) this module is replaced by a table of the texts, inlined
 * at build time (scripts/bundle.mjs, plugin `lua-scripts`): there it reads no file.
 */
export function readLuaFile(name: string): string | undefined {
  try {
    return readFileSync(new URL(`./${name}.lua`, import.meta.url), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
