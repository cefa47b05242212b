/**
 * What metering and budgets cost: gateway and worker CPU per run and per delivered event for a
 * tenant without budgets and for one whose every model call reserves its worst case in Redis
 * (a tenant budget and each person's, by tokens and by cost, per day and month) and settles
 * after, on one stack, in alternating passes so drift hits both sides alike. Every call of both
 * is metered and priced (the usage facts are not optional); the difference is the budgets.
 * Figures only: nothing is asserted.
 *
 * `npm run bench:metering` (builds first). Knobs: BENCH_METERING_RUNS=300 (one-chunk runs per
 * pass, for CPU per run), BENCH_METERING_STREAMS=50 (concurrent runs of BENCH_METERING_CHUNKS=100
 * chunks per pass, for CPU per event), BENCH_METERING_PASSES=3, BENCH_WORKERS=2.
 */
import { runChatLoad } from './chat-load.js';
import { startBenchStack, type BenchStack } from './bench-stack.js';
import { cpuSplit } from './bench-targets.js';
import { CpuMeter } from './process-cpu.js';
import { Teardown } from './teardown.js';

const RUNS = Math.max(1, Number(process.env.BENCH_METERING_RUNS ?? 300) || 300);
const STREAMS = Math.max(1, Number(process.env.BENCH_METERING_STREAMS ?? 50) || 50);
const CHUNKS = Math.max(1, Number(process.env.BENCH_METERING_CHUNKS ?? 100) || 100);
const PASSES = Math.max(1, Number(process.env.BENCH_METERING_PASSES ?? 3) || 3);
const WORKERS = Math.max(1, Number(process.env.BENCH_WORKERS ?? 2) || 2);

const PLAIN_KEY = 'bench-plain-key';
const BUDGETED_KEY = 'bench-budgeted-key';
const OPERATOR_KEY = 'bench-operator-key';
const PRICES = { scripted: { input: '2.50', output: '10.00' } };

interface Side {
  label: string;
  apiKey: string;
  /** CPU ms per run (gateway + workers), one figure per pass. */
  perRun: number[];
  /** CPU µs per delivered event (gateway + workers), one figure per pass. */
  perEvent: number[];
  failed: number;
}

const log = (line: string) => process.stderr.write(`[metering bench] ${line}\n`);

async function setBudgets(stack: BenchStack): Promise<void> {
  // Limits far above what the bench spends: every call reserves and settles, none is refused.
  const budgets = [
    { scope: 'tenant', metric: 'tokens', period: 'day', limit: 10_000_000_000 },
    { scope: 'tenant', metric: 'cost', period: 'month', limit: '1000000' },
    { scope: 'user', user_id: '*', metric: 'tokens', period: 'day', limit: 10_000_000_000 },
    { scope: 'user', user_id: '*', metric: 'cost', period: 'month', limit: '1000000' },
  ];
  for (const budget of budgets) {
    const res = await fetch(`${stack.gateway.url}/api/v1/admin/budgets`, {
      method: 'PUT',
      headers: { 'x-api-key': OPERATOR_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ ...budget, tenant_id: 'budgeted' }),
    });
    if (!res.ok) throw new Error(`PUT /admin/budgets answered ${res.status}: ${await res.text()}`);
  }
}

/** One pass of `sessions` runs of `message` for one side: CPU per run and per delivered event. */
async function pass(stack: BenchStack, side: Side, sessions: number, message: string, staggerMs: number): Promise<{ cpuMs: number; events: number; failed: number }> {
  const cpu = new CpuMeter(stack.pids, stack.cpuTrees);
  let firstError: string | undefined;
  const result = await runChatLoad({
    url: stack.gateway.url,
    apiKey: side.apiKey,
    sessions,
    message,
    staggerMs,
    timeoutMs: 120_000,
    lingerMs: 250,
    onFirstEmit: () => cpu.start(),
    onEvent: (event) => {
      if (event.event_type === 'error') firstError ??= `${event.error_code ?? ''}: ${event.error}`;
    },
  });
  const use = cpu.stop();
  if (result.failed > 0) log(`${side.label}: ${result.failed} runs failed: ${JSON.stringify(result.failures)}; the first error: ${firstError ?? 'none'}`);
  return { cpuMs: cpuSplit(use, 1, 1e3).total, events: result.eventsReceived, failed: result.failed };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const teardown = new Teardown();
  try {
    const stack = await startBenchStack(teardown, {
      workerConcurrency: Math.max(RUNS, STREAMS) + 100,
      workers: WORKERS,
      log,
      env: {
        DATAAGENT_API_KEYS: `${PLAIN_KEY}:plain:load,${BUDGETED_KEY}:budgeted:load,${OPERATOR_KEY}:ops:olga:operator`,
        DATAAGENT_MODEL_PRICES: JSON.stringify(PRICES),
        DATAAGENT_TENANT_CACHE_SECONDS: '60',
      },
    });
    await setBudgets(stack);
    const sides: Side[] = [
      { label: 'no budgets', apiKey: PLAIN_KEY, perRun: [], perEvent: [], failed: 0 },
      { label: 'tenant + person budgets, tokens + cost, day + month', apiKey: BUDGETED_KEY, perRun: [], perEvent: [], failed: 0 },
    ];
    // A warm-up pass of each (code compiled, connections and caches filled, budgets read).
    for (const side of sides) await pass(stack, side, 50, '[[chunks:5]]', 500);
    for (let i = 0; i < PASSES; i++) {
      // Alternating which side goes first, so a trend over the passes hits both alike.
      for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
        const runs = await pass(stack, side, RUNS, '[[chunks:1]]', 2_000);
        side.perRun.push(runs.cpuMs / RUNS);
        const streams = await pass(stack, side, STREAMS, `[[chunks:${CHUNKS}]] [[slow:10]]`, 1_000);
        side.perEvent.push((streams.cpuMs * 1e3) / Math.max(1, streams.events));
        side.failed += runs.failed + streams.failed;
        log(`pass ${i + 1}, ${side.label}: ${(runs.cpuMs / RUNS).toFixed(2)} ms per run, ${((streams.cpuMs * 1e3) / Math.max(1, streams.events)).toFixed(1)} µs per event`);
      }
    }
    const [plain, budgeted] = sides as [Side, Side];
    const ratio = (a: number, b: number) => `${((b / a - 1) * 100).toFixed(1)} %`;
    console.log(`\nMetering and budgets: gateway + ${WORKERS} workers' CPU, median of ${PASSES} alternating passes (${RUNS} one-chunk runs; ${STREAMS} runs of ${CHUNKS} chunks)\n`);
    console.log('| | CPU ms per run | CPU µs per event | runs failed |');
    console.log('|---|---|---|---|');
    for (const side of sides) console.log(`| ${side.label} | ${median(side.perRun).toFixed(2)} | ${median(side.perEvent).toFixed(1)} | ${side.failed} |`);
    console.log(`| budgets' cost | ${ratio(median(plain.perRun), median(budgeted.perRun))} | ${ratio(median(plain.perEvent), median(budgeted.perEvent))} | |`);
    console.log(`\nEvery pass: ${sides.map((s) => `${s.label}: ${s.perRun.map((x) => x.toFixed(2)).join('/')} ms per run, ${s.perEvent.map((x) => x.toFixed(1)).join('/')} µs per event`).join('; ')}`);
  } finally {
    await teardown.runAll(log);
  }
}

await main();
