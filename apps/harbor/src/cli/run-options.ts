import { HarborUsageError } from './harbor-errors.js';

export const MODES = ['rest', 'socketio', 'ws'] as const;
export type Mode = (typeof MODES)[number];

/** `harbor run`'s options as commander hands them over: every value a string, unchecked. */
export interface RawRunOptions {
  server?: string;
  apiKey?: string;
  questions?: string;
  concurrency?: string;
  mode?: string;
  out?: string;
  minPassRate?: string;
  rampUp?: string;
  duration?: string;
  repeat?: string;
  timeout?: string;
  assistant?: string;
}

/** `harbor run`'s options, checked; times in milliseconds. */
export interface RunOptions {
  /** The gateway's base URL, without a trailing slash or `/api/v1`. */
  server: string;
  apiKey?: string;
  questions: string;
  concurrency: number;
  mode: Mode;
  out: string;
  /** 0..1 */
  minPassRate: number;
  rampUpMs: number;
  /** Run for this long, cycling through the questions, instead of `repeat` passes. */
  durationMs?: number;
  repeat: number;
  /** Per question. */
  timeoutMs: number;
  assistant: string;
}

export const DEFAULTS = { concurrency: '10', mode: 'rest', out: 'harbor-report', minPassRate: '0', rampUp: '0', repeat: '1', timeout: '120', assistant: 'default' } as const;

/**
 * Checks `harbor run`'s options and converts them.
 *
 * @param env The API key falls back to `HARBOR_API_KEY`, which keeps it out of the process list.
 * @throws HarborUsageError naming every bad option at once.
 */
export function parseRunOptions(raw: RawRunOptions, env: NodeJS.ProcessEnv = {}): RunOptions {
  const problems: string[] = [];
  const number = (flag: string, value: string, check: (n: number) => boolean, expected: string): number => {
    const n = value.trim() === '' ? NaN : Number(value);
    if (!Number.isFinite(n) || !check(n)) problems.push(`${flag} must be ${expected} (got "${value}")`);
    return n;
  };
  const seconds = (flag: string, value: string, allowZero: boolean) =>
    number(flag, value, (n) => (allowZero ? n >= 0 : n > 0), allowZero ? 'a number of seconds, 0 or more' : 'a number of seconds above 0') * 1000;

  const server = parseServer(raw.server, problems);
  if (!raw.questions) problems.push('--questions is required: a JSON question set');
  const mode = raw.mode ?? DEFAULTS.mode;
  if (!(MODES as readonly string[]).includes(mode)) problems.push(`--mode must be one of ${MODES.join(', ')} (got "${mode}")`);
  const concurrency = number('--concurrency', raw.concurrency ?? DEFAULTS.concurrency, (n) => Number.isInteger(n) && n >= 1 && n <= 10_000, 'a whole number from 1 to 10000');
  const minPassRate = number('--min-pass-rate', raw.minPassRate ?? DEFAULTS.minPassRate, (n) => n >= 0 && n <= 1, 'a fraction from 0 to 1, e.g. 0.95');
  const repeat = number('--repeat', raw.repeat ?? DEFAULTS.repeat, (n) => Number.isInteger(n) && n >= 1, 'a whole number, 1 or more');
  const rampUpMs = seconds('--ramp-up', raw.rampUp ?? DEFAULTS.rampUp, true);
  const timeoutMs = seconds('--timeout', raw.timeout ?? DEFAULTS.timeout, false);
  const durationMs = raw.duration === undefined ? undefined : seconds('--duration', raw.duration, false);
  if (durationMs !== undefined && raw.repeat !== undefined) problems.push('--duration and --repeat exclude each other: run for a time, or a number of passes');
  const assistant = raw.assistant ?? DEFAULTS.assistant;
  if (assistant.trim() === '') problems.push('--assistant must not be empty');
  const out = raw.out ?? DEFAULTS.out;
  if (out.trim() === '') problems.push('--out must not be empty');

  if (problems.length > 0) throw new HarborUsageError(`bad options:\n  - ${problems.join('\n  - ')}`);
  const apiKey = raw.apiKey ?? env.HARBOR_API_KEY;
  return {
    server: server!,
    ...(apiKey ? { apiKey } : {}),
    questions: raw.questions!,
    concurrency,
    mode: mode as Mode,
    out,
    minPassRate,
    rampUpMs,
    ...(durationMs !== undefined ? { durationMs } : {}),
    repeat,
    timeoutMs,
    assistant,
  };
}

/** `http://host:8000`, `http://host:8000/`, `http://host:8000/api/v1` → `http://host:8000`. */
function parseServer(value: string | undefined, problems: string[]): string | undefined {
  if (!value) {
    problems.push('--server is required: the gateway URL, e.g. http://127.0.0.1:8000');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems.push(`--server must be a URL such as http://127.0.0.1:8000 (got "${value}")`);
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    problems.push(`--server must be an http:// or https:// URL (got "${value}")`);
    return undefined;
  }
  const path = url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  return `${url.origin}${path}`;
}
