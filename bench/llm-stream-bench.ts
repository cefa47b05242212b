/**
 * Client CPU of reading streamed chat completions: N completions of M chunks from the scripted
 * OpenAI-compatible server, running in a process of its own on loopback so that only the
 * client's CPU is counted, read three ways:
 * - `sdk`: the openai SDK's own stream (`for await` over `chat.completions.create`) on Node's
 *   fetch, the way OpenAIChatModel read it before it parsed the body itself;
 * - `reader`: the same SDK request on Node's fetch, its raw `Response` (`.asResponse()`) read by
 *   SseChunkReader: what the parser alone saves;
 * - `reader+leanFetch`: the same with the SDK's `fetch` option set to leanFetch;
 * - `model`: OpenAIChatModel.stream end to end, as the worker runs it (SseChunkReader on leanFetch).
 *
 * Two pacings: `burst` (the server writes as fast as it can, so one network read carries several
 * chunks) and `paced` (a few ms between a stream's chunks, so nearly every chunk is a read of its
 * own, as with a real model). Figures: process CPU µs per chunk (user + system, from
 * process.cpuUsage over the pass; the median of the passes) and chunks per second.
 *
 * `node dist/bench/llm-stream-bench.js` runs it alone; run-bench.ts runs it as a section
 * (BENCH_SKIP_LLM_STREAM=1 skips it). BENCH_LLM_STREAM_PASSES=5 sets the timed passes.
 */
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { pathToFileURL } from 'node:url';
import { leanFetch } from '#llm/lean-fetch.js';
import { OpenAIChatModel } from '#llm/openai-chat-model.js';
import { SseChunkReader } from '#llm/sse-chunk-reader.js';
import { startLlmServerProcess } from './llm-server-process.js';

export type LlmStreamPath = 'sdk' | 'reader' | 'reader+leanFetch' | 'model';

export interface LlmStreamWorkload {
  name: 'burst' | 'paced';
  completions: number;
  chunksPerCompletion: number;
  /** Completions in flight at once. */
  concurrency: number;
  /** Pause between a stream's chunks on the server, ms (0: as fast as it writes). */
  chunkIntervalMs: number;
}

export interface LlmStreamBenchRow {
  workload: LlmStreamWorkload['name'];
  path: LlmStreamPath;
  chunks: number;
  /** Median over the passes of client process CPU (user + system) / text chunks read. */
  cpuUsPerChunk: number;
  /** Every pass's CPU µs per chunk, in run order. */
  passesCpuUsPerChunk: number[];
  /** Median over the passes. */
  chunksPerSecond: number;
}

export interface LlmStreamBenchResult {
  passes: number;
  workloads: LlmStreamWorkload[];
  rows: LlmStreamBenchRow[];
}

const WORKLOADS: LlmStreamWorkload[] = [
  { name: 'burst', completions: 200, chunksPerCompletion: 200, concurrency: 20, chunkIntervalMs: 0 },
  { name: 'paced', completions: 100, chunksPerCompletion: 200, concurrency: 100, chunkIntervalMs: 5 },
];
const PATHS: LlmStreamPath[] = ['sdk', 'reader', 'reader+leanFetch', 'model'];
const API_KEY = 'sk-bench-llm-stream';
const MODEL = 'bench-model';

/** Reads one completion along `path`; resolves with its text chunk count. */
type Reader = (message: string) => Promise<number>;

function readerFor(path: LlmStreamPath, baseUrl: string): Reader {
  const params = (message: string): ChatCompletionCreateParamsStreaming => ({ model: MODEL, messages: [{ role: 'user', content: message }], stream: true });
  if (path === 'model') {
    const model = new OpenAIChatModel({ model: MODEL, baseUrl, apiKey: API_KEY, maxRetries: 0 });
    return async (message) => {
      let texts = 0;
      for await (const chunk of model.stream({ messages: [{ role: 'user', content: message }], tools: [], signal: new AbortController().signal })) {
        if (chunk.type === 'text') texts++;
      }
      return texts;
    };
  }
  const client = new OpenAI({
    apiKey: API_KEY,
    baseURL: baseUrl,
    maxRetries: 0,
    organization: null,
    project: null,
    ...(path === 'reader+leanFetch' ? { fetch: leanFetch } : {}),
  });
  if (path === 'sdk') {
    return async (message) => {
      let texts = 0;
      const stream = await client.chat.completions.create(params(message), { signal: new AbortController().signal });
      for await (const chunk of stream) {
        if (chunk.choices?.[0]?.delta?.content) texts++;
      }
      return texts;
    };
  }
  return async (message) => {
    let texts = 0;
    const response = await client.chat.completions.create(params(message), { signal: new AbortController().signal }).asResponse();
    const reader = new SseChunkReader(response);
    for (let batch = await reader.read(); batch !== null; batch = await reader.read()) {
      for (const chunk of batch as readonly ChatCompletionChunk[]) {
        if (chunk.choices?.[0]?.delta?.content) texts++;
      }
    }
    return texts;
  };
}

/** One pass of `workload` along `read`: CPU µs per chunk and chunks per second. */
async function pass(read: Reader, workload: LlmStreamWorkload): Promise<{ cpuUsPerChunk: number; chunksPerSecond: number }> {
  const message = `[[chunks:${workload.chunksPerCompletion}]]${workload.chunkIntervalMs > 0 ? ` [[slow:${workload.chunkIntervalMs}]]` : ''}`;
  let next = 0;
  let chunks = 0;
  const lane = async () => {
    while (next < workload.completions) {
      next++;
      const texts = await read(message);
      if (texts !== workload.chunksPerCompletion) throw new Error(`expected ${workload.chunksPerCompletion} text chunks, read ${texts}`);
      chunks += texts;
    }
  };
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  await Promise.all(Array.from({ length: workload.concurrency }, lane));
  const wallMs = performance.now() - wallBefore;
  const cpu = process.cpuUsage(cpuBefore);
  return { cpuUsPerChunk: (cpu.user + cpu.system) / chunks, chunksPerSecond: chunks / (wallMs / 1000) };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * Runs every workload along every path: one warm-up pass each, then `passes` timed passes with
 * the paths' order rotating so that none always runs first on a warm machine.
 * @throws Error when a completion yields another number of text chunks than the server sent.
 */
export async function runLlmStreamBench(passes = Math.max(1, Number(process.env.BENCH_LLM_STREAM_PASSES ?? 5) || 5)): Promise<LlmStreamBenchResult> {
  const server = await startLlmServerProcess();
  try {
    const rows: LlmStreamBenchRow[] = [];
    for (const workload of WORKLOADS) {
      const readers = new Map(PATHS.map((path) => [path, readerFor(path, server.baseUrl)]));
      for (const path of PATHS) await pass(readers.get(path)!, workload);
      const results = new Map<LlmStreamPath, Array<{ cpuUsPerChunk: number; chunksPerSecond: number }>>(PATHS.map((path) => [path, []]));
      for (let i = 0; i < passes; i++) {
        for (let j = 0; j < PATHS.length; j++) {
          const path = PATHS[(i + j) % PATHS.length]!;
          results.get(path)!.push(await pass(readers.get(path)!, workload));
        }
      }
      for (const path of PATHS) {
        const runs = results.get(path)!;
        rows.push({
          workload: workload.name,
          path,
          chunks: workload.completions * workload.chunksPerCompletion,
          cpuUsPerChunk: median(runs.map((r) => r.cpuUsPerChunk)),
          passesCpuUsPerChunk: runs.map((r) => r.cpuUsPerChunk),
          chunksPerSecond: median(runs.map((r) => r.chunksPerSecond)),
        });
      }
    }
    return { passes, workloads: WORKLOADS, rows };
  } finally {
    await server.stop();
  }
}

/** The figures as a table, each path beside the SDK's stream of the same workload. */
export function formatLlmStreamBench(result: LlmStreamBenchResult): string {
  const lines = [
    `LLM stream read, client CPU (bench/llm-stream-bench.ts; scripted server in its own process; median of ${result.passes} passes):`,
    ...result.workloads.map(
      (w) => `  ${w.name}: ${w.completions} completions × ${w.chunksPerCompletion} chunks, ${w.concurrency} at a time, ${w.chunkIntervalMs > 0 ? `${w.chunkIntervalMs} ms between chunks` : 'unpaced'}`,
    ),
    `  ${'workload'.padEnd(9)}${'path'.padEnd(17)}${'µs/chunk'.padStart(10)}${'vs sdk'.padStart(9)}${'chunks/s'.padStart(11)}`,
  ];
  for (const row of result.rows) {
    const sdk = result.rows.find((r) => r.workload === row.workload && r.path === 'sdk');
    const change = sdk && row.path !== 'sdk' ? `${(((row.cpuUsPerChunk - sdk.cpuUsPerChunk) / sdk.cpuUsPerChunk) * 100).toFixed(0)} %` : '';
    lines.push(
      `  ${row.workload.padEnd(9)}${row.path.padEnd(17)}${row.cpuUsPerChunk.toFixed(2).padStart(10)}${change.padStart(9)}${row.chunksPerSecond.toFixed(0).padStart(11)}`,
    );
  }
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(formatLlmStreamBench(await runLlmStreamBench()));
}
