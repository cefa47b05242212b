/**
 * Bookkeeping for the fuzz suite: what was sent and seen (inputs per category, HTTP statuses,
 * run ids), a scanner that looks for secrets in everything that comes back or gets logged, a
 * tap on each app process's output, and a wrapper around fast-check that records a failing
 * property (seed, path, minimal counterexample) instead of stopping the category.
 */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import fc from 'fast-check';

/** Counts of everything the suite did, printed at the end. */
export class FuzzLedger {
  readonly inputs = new Map<string, number>();
  readonly statuses = new Map<string, Map<string, number>>();
  readonly runIds = new Set<string>();
  readonly failures: string[] = [];
  readonly crashes: string[] = [];
  readonly notes: string[] = [];

  count(category: string, n = 1): void {
    this.inputs.set(category, (this.inputs.get(category) ?? 0) + n);
  }

  status(category: string, status: number | string): void {
    let m = this.statuses.get(category);
    if (!m) this.statuses.set(category, (m = new Map()));
    const key = String(status);
    m.set(key, (m.get(key) ?? 0) + 1);
  }

  /** Session of each run seen, when the answer said it. */
  readonly runSessions = new Map<string, string>();

  run(runId: unknown, sessionId?: unknown): void {
    if (typeof runId !== 'string' || !runId) return;
    this.runIds.add(runId);
    if (typeof sessionId === 'string' && sessionId) this.runSessions.set(runId, sessionId);
  }

  get totalInputs(): number {
    let n = 0;
    for (const v of this.inputs.values()) n += v;
    return n;
  }

  /** The figures as lines of text. */
  summary(): string {
    const lines = ['inputs per category:'];
    for (const [k, v] of [...this.inputs].sort()) lines.push(`  ${k.padEnd(34)} ${v}`);
    lines.push(`  ${'TOTAL'.padEnd(34)} ${this.totalInputs}`);
    lines.push('statuses seen:');
    for (const [k, m] of [...this.statuses].sort()) {
      lines.push(`  ${k.padEnd(34)} ${[...m].sort().map(([s, n]) => `${s}×${n}`).join(' ')}`);
    }
    return lines.join('\n');
  }
}

/** Looks for secrets (whole, or their distinctive middle) in text. */
export class SecretScanner {
  readonly hits: string[] = [];
  private readonly secrets: Array<{ name: string; value: string }>;

  constructor(secrets: Record<string, string | undefined>) {
    this.secrets = Object.entries(secrets)
      .filter((e): e is [string, string] => typeof e[1] === 'string' && e[1].length >= 8)
      .map(([name, value]) => ({ name, value }));
  }

  /** Records a hit for each secret found in `text`; returns whether any was found. */
  scan(where: string, text: string | Buffer | undefined): boolean {
    if (text === undefined) return false;
    const s = typeof text === 'string' ? text : text.toString('latin1') + '\n' + text.toString('utf8');
    let found = false;
    for (const { name, value } of this.secrets) {
      const at = s.indexOf(value);
      if (at >= 0) {
        found = true;
        if (this.hits.length < 50) this.hits.push(`${name} in ${where}: …${s.slice(Math.max(0, at - 80), at).replace(/\s+/g, ' ')}<${name}>${s.slice(at + value.length, at + value.length + 40).replace(/\s+/g, ' ')}…`);
      }
    }
    return found;
  }
}

/**
 * Reads every line a process writes (besides the harness's own reader) so secrets are looked
 * for in all of them, not only the last 2,000 kept by the harness, and keeps a tail for
 * crash reports.
 */
export class LogTap {
  readonly tail: string[] = [];
  lines = 0;

  constructor(readonly name: string, proc: ChildProcess, scanner: SecretScanner, tailSize = 120) {
    for (const stream of [proc.stdout, proc.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream }).on('line', (line) => {
        this.lines++;
        scanner.scan(`${name} log line ${this.lines}`, line);
        this.tail.push(line.length > 2_000 ? `${line.slice(0, 2_000)}…` : line);
        if (this.tail.length > tailSize) this.tail.shift();
      });
    }
  }

  /** Lines that look like a crash or an uncaught error, for the report. */
  errors(): string[] {
    return this.tail.filter((l) => /error|uncaught|exception|fatal|RangeError|TypeError/i.test(l)).slice(-15);
  }
}

export interface CheckOptions {
  seed: number;
  numRuns: number;
  /** Stops generating and shrinking after this long (a failure found before it is still reported). */
  timeLimitMs: number;
  /** Shrinking stops this long after the first failure (the smallest failing input so far is reported). Default 10 s. */
  shrinkMs?: number;
}

/**
 * Runs one property with a fixed seed and records its outcome in the ledger: a failure is
 * reported with its seed, path and shrunk counterexample, and the category goes on with its
 * next property.
 * @returns whether the property held.
 */
export async function checkProperty<T>(ledger: FuzzLedger, name: string, arb: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, options: CheckOptions): Promise<boolean> {
  const started = Date.now();
  let firstFailure: number | null = null;
  const bounded = async (value: T) => {
    // Past the shrink budget every further candidate is skipped, which ends shrinking at once.
    if (firstFailure !== null && Date.now() - firstFailure > (options.shrinkMs ?? 10_000)) fc.pre(false);
    try {
      await predicate(value);
    } catch (err) {
      if (!fc.PreconditionFailure.isFailure(err)) firstFailure ??= Date.now();
      throw err;
    }
  };
  let details: fc.RunDetails<[T]>;
  try {
    details = await fc.check(fc.asyncProperty(arb, bounded), {
      seed: options.seed,
      numRuns: options.numRuns,
      interruptAfterTimeLimit: options.timeLimitMs,
      markInterruptAsFailure: false,
      endOnFailure: false,
      maxSkipsPerRun: 1_000,
    });
  } catch (err) {
    ledger.failures.push(`FAIL ${name} (seed ${options.seed}): the property itself broke: ${err instanceof Error ? err.stack?.slice(0, 1_500) : String(err)}`);
    return false;
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const interrupted = details.interrupted ? ' (interrupted by its time limit)' : '';
  if (!details.failed) {
    ledger.notes.push(`ok   ${name}: ${details.numRuns} runs in ${seconds} s, seed ${options.seed}${interrupted}`);
    return true;
  }
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  // A batch that shrank to several items: say which of them fail on their own.
  const example = details.counterexample?.[0];
  let alone = '';
  if (Array.isArray(example) && example.length > 1) {
    const failing: number[] = [];
    for (let i = 0; i < example.length; i++) {
      try {
        await predicate([example[i]] as T);
      } catch {
        failing.push(i);
      }
    }
    alone = `\n  items failing on their own: ${failing.length ? failing.map((i) => `#${i + 1} ${compact(example[i], 1_500)}`).join(' ; ') : 'none (only together)'}`;
  }
  ledger.failures.push(
    `FAIL ${name} (replay: seed ${options.seed}, path "${details.counterexamplePath}"; ${details.numRuns} runs, ${details.numShrinks} shrinks, ${seconds} s${interrupted})\n` +
      `  error: ${error.slice(0, 3_000)}\n` +
      `  minimal input: ${compact(example)}${alone}`,
  );
  ledger.notes.push(`FAIL ${name}: after ${details.numRuns} runs, ${seconds} s`);
  return false;
}

/** JSON of a value with long strings and byte arrays summarised, for reports a person reads. */
export function compact(value: unknown, max = 4_000): string {
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'string' && v.length > 160) {
      const same = /^(.)\1*$/s.test(v) ? ` all ${JSON.stringify(v[0])}` : '';
      return `${v.slice(0, 80)}…(${v.length} chars${same})`;
    }
    if (Array.isArray(v) && v.length > 48 && v.every((x) => typeof x === 'number')) return `bytes[${v.length}] ${hex(Buffer.from(v as number[]), 24)}`;
    return v;
  });
  return text === undefined ? String(value) : text.length > max ? `${text.slice(0, max)}…` : text;
}

/** A promise that rejects after `ms` with `what` in its message. */
export function deadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]);
}

/** Short printable form of bytes for reports. */
export function hex(bytes: Buffer, max = 64): string {
  const shown = bytes.subarray(0, max).toString('hex').replace(/(..)/g, '$1 ').trim();
  return bytes.length > max ? `${shown} … (${bytes.length} bytes)` : shown;
}
