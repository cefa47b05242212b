/**
 * The Lua scripts this library gives Redis (`defineCommand`, run by EVALSHA), each in its own
 * file beside this module: `lua/<name>.lua`, headed by a comment saying what it does, its KEYS
 * and ARGV, and what it returns.
 *
 * Where the texts come from, in each way the code runs:
 * - jest, on the TypeScript sources: read from the .lua files beside this module;
 * - tsc's output (dist/libs/…, what bench and the maintenance commands run): read from copies
 *   `npm run build` puts beside the compiled module (scripts/bundle.mjs copies them, since tsc
 *   emits JavaScript only);
 * - the bundles (dist/gateway.cjs, dist/worker.cjs): inlined at build time with esbuild's text
 *   loader, so the gateway and the worker read no script file when they run.
 * Why this route: the bundles are what production runs, and there `import.meta.url` is the
 * bundle's, so a path relative to this module would point at nothing; inlining makes the
 * bundle carry its scripts, as it carries its code. tsc and jest cannot import a .lua file, and
 * a generated TypeScript copy of every script would put them back into TypeScript; reading
 * them beside the module needs no generated file and nothing but a copy at build time. The one
 * module that reads (lua-files.ts) is all the bundle replaces: names, caching, checks and
 * substitution below are the same code everywhere.
 *
 * Substitution: a script that needs values only TypeScript knows (the run-event append script
 * names its keys with redis-keys.ts's layout, and publishes with PUBLISH or SPUBLISH) writes
 * placeholders `{{NAME}}` (capitals, digits, _), which {@link luaScript} replaces verbatim with
 * the values given. Every placeholder of the script must be given and every value given must be
 * used, or it throws: no script reaches Redis with a placeholder left in it. Values are Lua
 * source, fixed per process: anything that varies per call goes in ARGV.
 */
import { readLuaFile } from './lua-files.js';

/** A script's name: its file's, kebab-case, without `.lua`. */
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

const PLACEHOLDER = /\{\{([A-Z][A-Z0-9_]*)\}\}/g;

/** Texts read so far, by name (each file is read once per process). */
const texts = new Map<string, string>();

/**
 * The text of the script `lua/<name>.lua`, its placeholders replaced by `substitutions`.
 * @throws Error when there is no such script, or a placeholder is left without a value, or a value has no placeholder.
 */
export function luaScript(name: string, substitutions: Readonly<Record<string, string>> = {}): string {
  let text = texts.get(name);
  if (text === undefined) {
    text = NAME.test(name) ? readLuaFile(name) : undefined;
    if (text === undefined) throw new Error(`no Lua script named "${name}" (libs/transport/src/lua/${name}.lua)`);
    texts.set(name, text);
  }
  const used = new Set<string>();
  const missing = new Set<string>();
  const script = text.replace(PLACEHOLDER, (placeholder, key: string) => {
    if (!Object.hasOwn(substitutions, key)) {
      missing.add(key);
      return placeholder;
    }
    used.add(key);
    return substitutions[key]!;
  });
  if (missing.size > 0) throw new Error(`Lua script "${name}": no value for ${[...missing].map((key) => `{{${key}}}`).join(', ')}`);
  const unused = Object.keys(substitutions).filter((key) => !used.has(key));
  if (unused.length > 0) throw new Error(`Lua script "${name}" has no placeholder ${unused.map((key) => `{{${key}}}`).join(', ')}`);
  return script;
}
