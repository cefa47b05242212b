/**
 * The capacity report's sizing: how many cores of gateway, workers, Redis and MySQL a number of
 * people streaming at once would need, from the CPU per event (and per run) the capacity bench
 * measured. Pure arithmetic, no I/O: capacity.ts feeds it the measured figures, the report prints
 * the rows and {@link SIZING_FORMULA}.
 */

/** The parts of the system sized, as the bench's process roles map onto them. */
export const SIZED_PARTS = ['gateway', 'workers', 'redis', 'mysql'] as const;
export type SizedPart = (typeof SIZED_PARTS)[number];

export interface SizingFigures {
  /**
   * CPU µs per delivered event by part, at the largest concurrent run count that held the
   * objectives: the process's CPU over the round / the events the clients received. It carries
   * the bench runs' own start and end costs spread over their events.
   */
  eventUs: Record<SizedPart, number>;
  /** Delivered events per bench run at that level (its events / its runs). */
  eventsPerBenchRun: number;
  /**
   * CPU µs per run by part, from short tool-calling runs (a chunk, the tool call, the answer),
   * with `eventsPerShortRun` events each; absent when not measured (CAPACITY_PER_RUN=0).
   */
  runUs?: Record<SizedPart, number>;
  eventsPerShortRun?: number;
}

export interface SizingAssumptions {
  /** Head counts, one row each. */
  people: number[];
  /** Tokens per second each person's answer streams at. */
  tokensPerSecond: number;
  /** Events per token (1: every token its own event, no coalescing). */
  eventsPerToken: number;
  /** A new run (a turn: start, a tool call, the end) every this many seconds per person. */
  runEverySeconds: number;
  /** How busy a core may be planned to run (0.7: 30 % headroom). */
  utilization: number;
}

export const DEFAULT_ASSUMPTIONS: SizingAssumptions = {
  people: [1_000, 10_000, 100_000],
  tokensPerSecond: 30,
  eventsPerToken: 1,
  runEverySeconds: 30,
  utilization: 0.7,
};

/** The per-event and per-run costs the rows use, and where they came from. */
export interface SizingCosts {
  /** Streaming CPU µs per event by part (per-run costs taken out when they were measured). */
  eventUs: Record<SizedPart, number>;
  /** CPU µs per run by part (0 when not measured: then they stay inside `eventUs`). */
  runUs: Record<SizedPart, number>;
  /**
   * Per part: `marginal` (the per-run cost taken out of the per-event figure), `all per run` (the
   * per-run cost would take out more than the per-event figure holds: the part's whole CPU per bench
   * run is charged per run, nothing per event) or `as measured` (no per-run figure: it stays inside).
   */
  basis: Record<SizedPart, 'marginal' | 'all per run' | 'as measured'>;
}

export interface SizingRow {
  people: number;
  /** people × tokens/s × events per token. */
  eventsPerSecond: number;
  /** people / run interval. */
  runsPerSecond: number;
  /** Cores by part at the planned utilization. */
  cores: Record<SizedPart, number>;
  /** Node processes for gateway and workers (one per core, each is single-threaded), whole cores for MySQL. */
  gatewayProcesses: number;
  workerProcesses: number;
  /** 1 shard ≈ 1 core: Redis runs commands on one thread. */
  redisShards: number;
  mysqlCores: number;
}

const positive = (n: number | undefined): n is number => typeof n === 'number' && Number.isFinite(n) && n > 0;

/**
 * The streaming cost per event with the per-run cost taken out: the bench round's CPU is
 * R × run + E × event, and a short run's measured cost already holds its own k events, so
 * event = (C − R × p) / (E − R × k), per event: (e − p / n) / (1 − k / n) with e the measured
 * CPU per event, n the events per bench run, p the CPU per short run and k its events.
 * When that is not positive the part's whole CPU per bench run (e × n) is charged per run and
 * nothing per event; without a per-run figure `e` is used as measured (per-run costs left in,
 * which overstates).
 */
export function sizingCosts(figures: SizingFigures): SizingCosts {
  const eventUs = {} as Record<SizedPart, number>;
  const runUs = {} as Record<SizedPart, number>;
  const basis = {} as SizingCosts['basis'];
  const n = figures.eventsPerBenchRun;
  const k = figures.eventsPerShortRun ?? 0;
  for (const part of SIZED_PARTS) {
    const e = figures.eventUs[part];
    const p = figures.runUs?.[part];
    const measured = positive(p) && positive(n) && n > k && Number.isFinite(e);
    const marginal = measured ? (e - p / n) / (1 - k / n) : NaN;
    if (measured && marginal > 0) {
      eventUs[part] = marginal;
      runUs[part] = p;
      basis[part] = 'marginal';
    } else if (measured) {
      eventUs[part] = 0;
      runUs[part] = e * n;
      basis[part] = 'all per run';
    } else {
      eventUs[part] = e;
      runUs[part] = 0;
      basis[part] = 'as measured';
    }
  }
  return { eventUs, runUs, basis };
}

/**
 * Cores by part for each head count:
 * cores = people × (tokens/s × events per token × event µs + run µs / run interval s) / 10⁶ / utilization.
 * Gateway and worker processes and MySQL cores are those cores rounded up; Redis shards the
 * Redis cores rounded up (1 shard ≈ 1 core).
 */
export function sizing(figures: SizingFigures, assumptions: SizingAssumptions = DEFAULT_ASSUMPTIONS): SizingRow[] {
  const costs = sizingCosts(figures);
  const eventsPerPerson = assumptions.tokensPerSecond * assumptions.eventsPerToken;
  const runsPerPerson = 1 / assumptions.runEverySeconds;
  return assumptions.people.map((people) => {
    const cores = {} as Record<SizedPart, number>;
    for (const part of SIZED_PARTS) {
      const usPerPersonSecond = eventsPerPerson * costs.eventUs[part] + runsPerPerson * costs.runUs[part];
      cores[part] = (people * usPerPersonSecond) / 1e6 / assumptions.utilization;
    }
    const whole = (n: number) => (Number.isFinite(n) ? Math.max(1, Math.ceil(n)) : NaN);
    return {
      people,
      eventsPerSecond: people * eventsPerPerson,
      runsPerSecond: people * runsPerPerson,
      cores,
      gatewayProcesses: whole(cores.gateway),
      workerProcesses: whole(cores.workers),
      redisShards: whole(cores.redis),
      mysqlCores: whole(cores.mysql),
    };
  });
}

/** The formula in words, for the report (the HTML prints it beside the rows). */
export function sizingFormula(assumptions: SizingAssumptions = DEFAULT_ASSUMPTIONS): string[] {
  const pct = Math.round(assumptions.utilization * 100);
  return [
    `events/s = people × ${assumptions.tokensPerSecond} tokens/s × ${assumptions.eventsPerToken} event per token; runs/s = people / ${assumptions.runEverySeconds} s.`,
    `cores of a part = (events/s × its CPU µs per event + runs/s × its CPU µs per run) / 10⁶ / ${pct} % (the busiest a core is planned to run).`,
    'CPU µs per event: that process’s CPU over the largest round that held ÷ the events its clients received (gateway: the gateway; workers: every worker summed; Redis: redis-server; MySQL: mariadbd).',
    'CPU µs per run: the same over short tool-calling runs ÷ those runs. When measured, the per-run share is taken out of the per-event figure: ' +
      'event µs = (e − p / n) / (1 − k / n), e the measured µs per event, n the events per bench run, p the µs per short run, k its events ' +
      '(when that is not positive, the part’s whole CPU per bench run, e × n, is charged per run and nothing per event); without a per-run figure the per-event figure keeps it (an overstatement).',
    'Gateway and worker processes = their cores rounded up (Node runs one thread per process); Redis shards = Redis cores rounded up (1 shard ≈ 1 core: Redis runs commands on one thread); MySQL = its cores rounded up.',
  ];
}
