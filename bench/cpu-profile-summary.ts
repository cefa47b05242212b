/**
 * Where a process's CPU goes, from the V8 CPU profiles the bench writes (BENCH_CPU_PROFILE_DIR,
 * cpu-profile-hook.ts): per profile, the sampled time within the streaming rounds' windows,
 * split three ways, each as µs per delivered event when the windows carry event counts:
 * - **by module, charged to the nearest caller in one**: a sample in Node's internals or a V8
 *   builtin is charged to the closest frame above it in a package (`node_modules/<name>`) or in
 *   DataAgent's own code (`libs/…`, `apps/…`), so the rows add up to the total;
 * - **inclusive by module**: samples with the module anywhere on the stack (rows overlap);
 * - **top functions by self time**.
 *
 * The windows come from `windows.json` beside the profiles, written by run-bench.ts: the monotonic
 * clock (µs) of each round's CPU window, the clock V8 stamps its samples with. Profiles named
 * `relay-*` take the bare relay's rounds, the others DataAgent's. Without windows.json the whole
 * profile counts (startup included).
 *
 * `node dist/bench/cpu-profile-summary.js <folder | file.cpuprofile …> [--top N] [--rounds 100x50,1000x10]`
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** One streaming round's CPU window on the monotonic clock, µs, and the events delivered in it. */
export interface ProfileWindow {
  label: string;
  fromUs: number;
  toUs: number;
  events: number;
  /** CPU seconds each process used in the window as /proc counts them (CpuMeter), by profile name: what the shares are scaled to. */
  cpuSeconds?: Record<string, number>;
}

/** The windows of each system's rounds: `dataagent` for gateway and workers, `relay` for the bare relay. */
export type ProfileWindows = Record<string, ProfileWindow[]>;

const WINDOWS_FILE = 'windows.json';

/** Writes the rounds' windows beside the profiles, for {@link summarizeProfileDir}. */
export async function writeProfileWindows(dir: string, windows: ProfileWindows): Promise<void> {
  await writeFile(path.join(dir, WINDOWS_FILE), `${JSON.stringify(windows, null, 2)}\n`);
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A row of a summary: a module or a function, and the sampled time charged to it. */
export interface ProfileRow {
  name: string;
  us: number;
}

export interface ProfileSummary {
  name: string;
  /** Sampled non-idle time within the windows, µs. */
  sampledUs: number;
  /** Events delivered within the windows (NaN without windows). */
  events: number;
  /**
   * The process's CPU per delivered event in the windows as /proc counts it, µs (NaN when the
   * windows carry none). The sampled time is wall time on the process's thread while not idle, so
   * it exceeds the CPU time when the process waits for a core: the rows are shown as shares of
   * the sampled time and, scaled to this figure, as µs per event.
   */
  measuredUsPerEvent: number;
  windows: string[];
  byModule: ProfileRow[];
  inclusive: ProfileRow[];
  topFunctions: ProfileRow[];
}

const VM_STATES = new Set(['(garbage collector)', '(program)', '(root)', '(idle)']);
/** Frames without a script: V8 builtins and native functions (on nearly every stack, so left out of the inclusive rows). */
const BUILTIN = '(V8 builtin / native)';

/** The module a frame belongs to: a package, a DataAgent file, a Node internal, or a VM state. */
function moduleOf({ functionName, url }: ProfileNode['callFrame']): { name: string; internal: boolean } {
  if (VM_STATES.has(functionName)) return { name: functionName, internal: false };
  if (url === '') return { name: BUILTIN, internal: true };
  if (url.startsWith('node:')) return { name: url.replace(/^node:(internal\/)?([^/]+).*$/, 'node:$1$2'), internal: true };
  const packageAt = url.lastIndexOf('/node_modules/');
  if (packageAt !== -1) {
    const [first, second] = url.slice(packageAt + '/node_modules/'.length).split('/');
    return { name: first!.startsWith('@') ? `${first}/${second}` : first!, internal: false };
  }
  const own = /\/(?:dist\/)?((?:libs|apps|bench|test)\/.*?)(?:\.js|\.ts)?$/.exec(url);
  return { name: own ? own[1]!.replace(/\/src\//, '/') : url, internal: false };
}

const shortUrl = (url: string) => url.replace(/^.*\/node_modules\//, '').replace(/^.*\/dist\//, '').replace(/^file:\/\//, '');

/**
 * Summarises one profile over `windows` (the whole profile when there are none).
 * @param top How many rows of each table to keep.
 */
export function summarizeProfile(name: string, profile: CpuProfile, windows: ProfileWindow[], top = 15): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const charged = new Map<number, string>();
  const onStack = new Map<number, string[]>();
  const chargeOf = (id: number): string => {
    let name = charged.get(id);
    if (name !== undefined) return name;
    const own = moduleOf(byId.get(id)!.callFrame);
    const up = parent.get(id);
    // A builtin or internal with nothing but the root above it is charged to itself.
    name = own.internal && up !== undefined && !VM_STATES.has(byId.get(up)!.callFrame.functionName) ? chargeOf(up) : own.name;
    charged.set(id, name);
    return name;
  };
  const stackOf = (id: number): string[] => {
    let modules = onStack.get(id);
    if (modules) return modules;
    const up = parent.get(id);
    modules = [...new Set([moduleOf(byId.get(id)!.callFrame).name, ...(up === undefined ? [] : stackOf(up))])];
    onStack.set(id, modules);
    return modules;
  };

  const byModule = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const functions = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
  let sampledUs = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    // A sample stands for the time until the next one.
    const us = profile.timeDeltas[i + 1] ?? 0;
    if (windows.length > 0 && !windows.some((w) => at >= w.fromUs && at < w.toUs)) continue;
    const id = profile.samples[i]!;
    const { callFrame } = byId.get(id)!;
    if (callFrame.functionName === '(idle)') continue;
    sampledUs += us;
    add(byModule, chargeOf(id), us);
    for (const module of stackOf(id)) if (module !== BUILTIN && (!VM_STATES.has(module) || module === callFrame.functionName)) add(inclusive, module, us);
    add(functions, VM_STATES.has(callFrame.functionName) ? callFrame.functionName : `${callFrame.functionName || '(anonymous)'} ${shortUrl(callFrame.url)}:${callFrame.lineNumber + 1}`, us);
  }
  const rows = (map: Map<string, number>) =>
    [...map]
      .map(([key, us]) => ({ name: key, us }))
      .sort((a, b) => b.us - a.us)
      .slice(0, top);
  return {
    name,
    sampledUs,
    events: windows.length > 0 ? windows.reduce((sum, w) => sum + w.events, 0) : NaN,
    measuredUsPerEvent:
      windows.length > 0 && windows.every((w) => w.cpuSeconds?.[name] !== undefined)
        ? (windows.reduce((sum, w) => sum + w.cpuSeconds![name]!, 0) * 1e6) / windows.reduce((sum, w) => sum + w.events, 0)
        : NaN,
    windows: windows.map((w) => w.label),
    byModule: rows(byModule),
    inclusive: rows(inclusive),
    topFunctions: rows(functions),
  };
}

/**
 * Summarises every `*.cpuprofile` of a folder with the windows of `windows.json` (when present).
 * @param only Profile names (without `.cpuprofile`) to read; all when empty.
 * @param rounds Round labels (`100×50/s`) whose windows count; all when empty.
 */
export async function summarizeProfileDir(dir: string, top = 15, only: string[] = [], rounds: string[] = []): Promise<ProfileSummary[]> {
  let windows: ProfileWindows = {};
  try {
    windows = JSON.parse(await readFile(path.join(dir, WINDOWS_FILE), 'utf8')) as ProfileWindows;
  } catch {
    // no windows: whole profiles
  }
  const names = (await readdir(dir)).filter((file) => file.endsWith('.cpuprofile')).map((file) => file.slice(0, -'.cpuprofile'.length));
  const summaries: ProfileSummary[] = [];
  for (const name of names.sort()) {
    if (only.length > 0 && !only.includes(name)) continue;
    const profile = JSON.parse(await readFile(path.join(dir, `${name}.cpuprofile`), 'utf8')) as CpuProfile;
    const mine = (windows[name.startsWith('relay-') ? 'relay' : 'dataagent'] ?? []).filter((w) => rounds.length === 0 || rounds.includes(w.label));
    summaries.push(summarizeProfile(name, profile, mine, top));
  }
  return summaries;
}

/**
 * A summary as the lines the bench prints: each row's share of the sampled time and, when the
 * process's measured CPU per event is known, that share of it in µs per delivered event.
 */
export function formatProfileSummary(s: ProfileSummary): string {
  const perEvent = (us: number) => (Number.isFinite(s.measuredUsPerEvent) ? ((us / s.sampledUs) * s.measuredUsPerEvent).toFixed(1) : '–').padStart(9);
  const share = (us: number) => `${((us / s.sampledUs) * 100).toFixed(1)} %`.padStart(8);
  const table = (title: string, rows: ProfileRow[]) => [`  ${title.padEnd(72)}    share µs/event`, ...rows.map((r) => `    ${r.name.slice(0, 70).padEnd(70)} ${share(r.us)} ${perEvent(r.us)}`)];
  const scope = s.windows.length > 0 ? `rounds ${s.windows.join(', ')}, ${s.events} delivered events` : 'the whole profile (no windows.json)';
  const sampledPerEvent = Number.isFinite(s.events) ? `${(s.sampledUs / s.events).toFixed(1)} µs per event` : '';
  return [
    `${s.name}: ${(s.sampledUs / 1000).toFixed(0)} ms sampled, not idle (${sampledPerEvent}), over ${scope}; ` +
      `measured CPU (/proc) ${Number.isFinite(s.measuredUsPerEvent) ? `${s.measuredUsPerEvent.toFixed(1)} µs per event` : 'not known'}`,
    ...table('by module, internals charged to the nearest caller in a module', s.byModule),
    ...table('inclusive by module (anywhere on the stack; rows overlap)', s.inclusive),
    ...table('top functions by self time', s.topFunctions),
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const topAt = args.indexOf('--top');
  const top = topAt === -1 ? 15 : Number(args.splice(topAt, 2)[1]) || 15;
  const roundsAt = args.indexOf('--rounds');
  const rounds = roundsAt === -1 ? [] : args.splice(roundsAt, 2)[1]!.split(',').map((r) => `${r.replace(/x/i, '×').replace(/\/s$/, '')}/s`);
  const [first, ...rest] = args;
  if (!first) {
    process.stderr.write('usage: cpu-profile-summary.js <folder | file.cpuprofile …> [--top N] [--rounds 100x50,1000x10]\n');
    process.exit(2);
  }
  const files = [first, ...rest];
  const summaries = files.length === 1 && !first.endsWith('.cpuprofile')
    ? await summarizeProfileDir(first, top, [], rounds)
    : (await Promise.all(files.map((file) => summarizeProfileDir(path.dirname(file), top, [path.basename(file, '.cpuprofile')], rounds)))).flat();
  console.log(summaries.map(formatProfileSummary).join('\n\n'));
}
