import { constants } from 'node:fs';
import { access, lstat, readlink, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { McpServerConfig } from './mcp-config.js';
import { STDIO_FIXED_ENV } from './stdio-environment.js';
import { isLauncherName } from './stdio-launchers.js';

/**
 * One entry of DATAAGENT_MCP_STDIO_ALLOW: the stdio commands users may register.
 *
 * Comma-separated entries, each a command and what follows it, separated by spaces:
 * - `mcp-server-git`, `/opt/tools/mcp-files`: that program (by its real path) with any arguments;
 * - `/opt/mcp/*`: any program whose real path is inside the real folder /opt/mcp, with any arguments;
 * - `npx -y @modelcontextprotocol/server-everything`: that program with exactly these arguments
 *   (pinned), the only way a launcher or interpreter is allowed;
 * - a trailing `env=API_KEY:OTHER_KEY` on any of them: the environment variables a user's server
 *   may set (none otherwise).
 *
 * Or a JSON list, for arguments with spaces or commas: strings as above, or objects
 * `{"command": "npx", "args": ["-y", "server"], "env": ["API_KEY"]}` (`args` absent: any arguments;
 * `[]`: none).
 */
export interface StdioAllowEntry {
  /** A command name (looked up on the servers' PATH) or an absolute path; for a folder entry, the folder. */
  command: string;
  /** Any program inside `command`, a folder, matches. */
  folder: boolean;
  /** The exact arguments a user's server must have; absent: any (never for a launcher). */
  args?: string[];
  /** The environment variable names a user's server may set. */
  env: string[];
  /** The entry as the operator wrote it, for messages. */
  text: string;
}

export type StdioMatch = { ok: true; entry: StdioAllowEntry } | { ok: false; field: string; reason: string };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_LINKS = 40;

/**
 * Parses DATAAGENT_MCP_STDIO_ALLOW (see StdioAllowEntry for the syntax).
 * @throws Error naming the first bad entry and what it must be.
 */
export function parseStdioAllowlist(text: string): StdioAllowEntry[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  if (!trimmed.startsWith('[')) return trimmed.split(',').map((s) => s.trim()).filter(Boolean).map(parseEntryText);
  let list: unknown;
  try {
    list = JSON.parse(trimmed);
  } catch (err) {
    throw new Error(`starts with "[" but is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(list)) throw new Error('as JSON, must be a list of entries');
  return list.map((item, i) => {
    if (typeof item === 'string') return parseEntryText(item.trim());
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new Error(`entry ${i} must be a string or {"command", "args"?, "env"?}`);
    const { command, args, env, ...rest } = item as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length > 0) throw new Error(`entry ${i} has ${unknown.map((k) => `"${k}"`).join(', ')}; an entry has "command", "args" and "env"`);
    if (typeof command !== 'string' || command.trim() === '') throw new Error(`entry ${i} needs "command", a non-empty string`);
    if (args !== undefined && (!Array.isArray(args) || !args.every((a) => typeof a === 'string'))) throw new Error(`entry ${i} ("${command}"): "args" must be a list of strings`);
    if (env !== undefined && (!Array.isArray(env) || !env.every((a) => typeof a === 'string'))) throw new Error(`entry ${i} ("${command}"): "env" must be a list of variable names`);
    return makeEntry(JSON.stringify(item), command.trim(), args as string[] | undefined, (env as string[] | undefined) ?? []);
  });
}

function parseEntryText(text: string): StdioAllowEntry {
  const tokens = text.split(/\s+/);
  const env: string[] = [];
  while (tokens.length > 1 && tokens.at(-1)!.startsWith('env=')) env.unshift(...tokens.pop()!.slice(4).split(':').filter(Boolean));
  const misplaced = tokens.find((t) => t.startsWith('env='));
  if (misplaced) throw new Error(`"${text}": ${misplaced} must come last (an argument that starts with "env=" needs the JSON form)`);
  const [command, ...args] = tokens;
  return makeEntry(text, command!, args.length > 0 ? args : undefined, env);
}

function makeEntry(text: string, command: string, args: string[] | undefined, env: string[]): StdioAllowEntry {
  const folder = command.endsWith('/*');
  const target = folder ? command.slice(0, -2) || '/' : command;
  if (target.includes('*')) throw new Error(`"${text}": only a whole folder may end in "*" (/opt/mcp/*), and it matches programs inside that folder by their real path`);
  if (target.includes('/') && !isAbsolute(target)) throw new Error(`"${text}": give a command name (looked up on PATH) or an absolute path, not the relative ${target}`);
  if (folder && args !== undefined) throw new Error(`"${text}": a folder entry takes no arguments; pin arguments on one program ("/opt/mcp/server --flag")`);
  if (!folder && args === undefined && isLauncherName(basename(target))) {
    throw new Error(`"${text}" runs whatever its arguments say (a launcher or interpreter), so it is allowed only with its arguments pinned: "${target} -y @modelcontextprotocol/server-everything", say`);
  }
  for (const name of env) {
    if (!ENV_NAME.test(name)) throw new Error(`"${text}": env names letters, digits and "_" (${name})`);
    if (STDIO_FIXED_ENV.has(name)) throw new Error(`"${text}": ${name} is set for every server (PATH, HOME, LANG, LC_ALL, TZ, TMPDIR) and cannot be given to users`);
  }
  return { command: target, folder, ...(args !== undefined ? { args } : {}), env, text };
}

/** A command found on disk: where, its real path, and the names along its symlinks. */
interface ResolvedCommand {
  real: string;
  /** The name as given, each link's target name, and the real name. */
  names: string[];
}

/**
 * Finds a command the way spawn does with this PATH (an absolute path as is; a name in the
 * first PATH folder holding an executable file of that name), then follows its symlinks.
 * @returns the real path and names, or why it cannot run.
 */
export async function resolveStdioCommand(command: string, path: string): Promise<ResolvedCommand | { error: string }> {
  let found: string | undefined;
  if (command.includes('/')) {
    if (!isAbsolute(command)) return { error: `"${command}" is a relative path: give a command name (looked up on PATH) or an absolute path` };
    if (await isExecutableFile(command)) found = command;
    else return { error: `"${command}" is not an executable file on the workers` };
  } else {
    for (const dir of path.split(':')) {
      if (!isAbsolute(dir)) continue;
      const candidate = join(dir, command);
      if (await isExecutableFile(candidate)) {
        found = candidate;
        break;
      }
    }
    if (!found) return { error: `"${command}" is not found on the workers' PATH` };
  }
  const names = [basename(command)];
  try {
    let link = found;
    for (let i = 0; i < MAX_LINKS; i++) {
      if (!(await lstat(link)).isSymbolicLink()) break;
      link = resolve(dirname(link), await readlink(link));
      names.push(basename(link));
    }
    const real = await realpath(found);
    names.push(basename(real));
    return { real, names };
  } catch {
    // A link changed between the lookup and here: refuse rather than guess.
    return { error: `"${command}" cannot be followed to a real file on the workers` };
  }
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    if (!(await stat(file)).isFile()) return false;
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether `real` lies inside the real folder of `dir` (never the folder itself, never by a string prefix). */
async function isInside(real: string, dir: string): Promise<boolean> {
  const realDir = await realpath(dir).catch(() => undefined);
  if (!realDir) return false;
  const rel = relative(realDir, real);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * Whether a user may run this stdio server: its command, found on `path` and followed to its
 * real path, must be an entry's program (or lie in an entry's folder); a launcher must have the
 * exact arguments an entry pinned; each `env` name must be one that entry lets users set.
 * @param server the user's server (`command`, `args`, `env` are read).
 * @param entries the parsed DATAAGENT_MCP_STDIO_ALLOW.
 * @param path the PATH the server will run with (`stdioPath()`), for its command and the entries'.
 * @returns the entry that allows it, or the field to blame and why.
 */
export async function matchStdioServer(server: Pick<McpServerConfig, 'command' | 'args' | 'env'>, entries: readonly StdioAllowEntry[], path: string): Promise<StdioMatch> {
  const command = server.command ?? '';
  const resolved = await resolveStdioCommand(command, path);
  if ('error' in resolved) return { ok: false, field: 'command', reason: `A stdio server runs a command on the workers, and ${resolved.error}` };

  const programs: StdioAllowEntry[] = [];
  for (const entry of entries) {
    if (entry.folder ? await isInside(resolved.real, entry.command) : await samePath(entry.command, resolved.real, path)) programs.push(entry);
  }
  if (programs.length === 0) {
    return { ok: false, field: 'command', reason: `A stdio server runs a command on the workers, and "${command}" is not on the operator's allowlist (DATAAGENT_MCP_STDIO_ALLOW)` };
  }

  const launcher = resolved.names.find(isLauncherName);
  const args = server.args ?? [];
  const fits = programs.filter((e) => (e.args === undefined ? launcher === undefined : e.args.length === args.length && e.args.every((a, i) => a === args[i])));
  if (fits.length === 0) {
    const pinned = programs.filter((e) => e.args !== undefined).map((e) => `"${e.text}"`);
    const runs = launcher !== undefined ? ` runs whatever its arguments say (${launcher} is a launcher or interpreter), so it` : '';
    return pinned.length > 0
      ? { ok: false, field: 'args', reason: `"${command}"${runs} may run only with the arguments the operator pinned in DATAAGENT_MCP_STDIO_ALLOW: ${pinned.join(' or ')}` }
      : { ok: false, field: 'command', reason: `"${command}"${runs} may run only with arguments the operator pinned, and DATAAGENT_MCP_STDIO_ALLOW pins none for it` };
  }

  const names = Object.keys(server.env ?? {});
  const allowing = fits.find((e) => names.every((n) => e.env.includes(n)));
  if (allowing) return { ok: true, entry: allowing };
  const refused = names.find((n) => !fits[0]!.env.includes(n))!;
  const offered = fits[0]!.env.length > 0 ? `only ${fits[0]!.env.join(', ')}` : 'no variable';
  return { ok: false, field: `env.${refused}`, reason: `env.${refused} is not passed to "${command}": the operator lets users set ${offered} for it (DATAAGENT_MCP_STDIO_ALLOW)` };
}

/** Whether an entry's program is this real path (the entry looked up on the same PATH). */
async function samePath(entryCommand: string, real: string, path: string): Promise<boolean> {
  const entry = await resolveStdioCommand(entryCommand, path);
  return !('error' in entry) && entry.real === real;
}
