import { pathToFileURL } from 'node:url';
import { StreamingToolActionDetector } from '#core/tools/text-calls/streaming-tool-action-detector.js';

export interface ParserBenchRow {
  corpus: string;
  chunking: string;
  megabytes: number;
  /** Best of the timed passes, MB/s (1 MB = 1e6 bytes of UTF-8 input). */
  mbPerSecond: number;
  toolCalls: number;
}

export interface ParserBenchResult {
  /** Plain prose in LLM-sized deltas (4–64 characters). */
  plainMBps: number;
  /** A tag every ~200 bytes, in LLM-sized deltas. */
  tagDenseMBps: number;
  /** Plain prose in 1 KB chunks. */
  plain1KMBps: number;
  /** Tag-dense text in 1 KB chunks. */
  tagDense1KMBps: number;
  rows: ParserBenchRow[];
}

const TARGET_BYTES = 32 * 1024 * 1024;
const PASSES = 3;

const WORDS = (
  'the agent reads the question and looks for the data it needs before it answers ' +
  'results are summarised per region while the model keeps track of what it has already seen ' +
  'a table with revenue by quarter shows growth of twelve percent compared with last year'
).split(' ');

/** A small deterministic generator so every run measures the same text. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function prose(random: () => number, length: number): string {
  const parts: string[] = [];
  let size = 0;
  while (size < length) {
    const word = WORDS[Math.floor(random() * WORDS.length)]!;
    const sep = random() < 0.08 ? '. ' : random() < 0.02 ? '\n\n' : ' ';
    parts.push(word, sep);
    size += word.length + sep.length;
  }
  return parts.join('').slice(0, length);
}

function plainCorpus(): string {
  return prose(rng(1), TARGET_BYTES);
}

function tagDenseCorpus(): { text: string; tags: number } {
  const random = rng(2);
  const parts: string[] = [];
  let size = 0;
  let tags = 0;
  while (size < TARGET_BYTES) {
    const before = prose(random, 90 + Math.floor(random() * 40));
    const tag =
      `<tool_action name="vector-search"><query value="revenue &amp; growth ${tags}" />` +
      `<limit value="${1 + (tags % 9)}" /></tool_action>`;
    parts.push(before, tag);
    size += before.length + tag.length;
    tags++;
  }
  return { text: parts.join(''), tags };
}

function chunkRandomly(text: string, min: number, max: number): string[] {
  const random = rng(3);
  const chunks: string[] = [];
  for (let i = 0; i < text.length; ) {
    const size = min + Math.floor(random() * (max - min + 1));
    chunks.push(text.slice(i, i + size));
    i += size;
  }
  return chunks;
}

function chunkEvenly(text: string, size: number): string[] {
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
  return chunks;
}

function feed(chunks: string[]): { ms: number; chars: number; calls: number } {
  const detector = new StreamingToolActionDetector({ newId: () => 'ta' });
  let chars = 0;
  let calls = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < chunks.length; i++) {
    const out = detector.push(chunks[i]!);
    for (let j = 0; j < out.length; j++) {
      const o = out[j]!;
      if (o.type === 'text') chars += o.text.length;
      else calls++;
    }
  }
  for (const o of detector.end()) if (o.type === 'text') chars += o.text.length;
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  return { ms, chars, calls };
}

function measure(corpus: string, text: string, chunking: string, chunks: string[], expectedCalls: number): ParserBenchRow {
  const bytes = Buffer.byteLength(text, 'utf8');
  let best = Infinity;
  for (let pass = 0; pass < PASSES; pass++) {
    const { ms, calls } = feed(chunks);
    if (calls !== expectedCalls) throw new Error(`${corpus}/${chunking}: expected ${expectedCalls} tool calls, got ${calls}`);
    best = Math.min(best, ms);
  }
  return { corpus, chunking, megabytes: bytes / 1e6, mbPerSecond: bytes / 1e6 / (best / 1000), toolCalls: expectedCalls };
}

/**
 * Measures how fast `StreamingToolActionDetector` consumes ~32 MB of plain prose and of
 * tag-dense text (one tag per ~200 bytes), fed as LLM-sized deltas and as 1 KB chunks.
 */
export async function runParserBench(): Promise<ParserBenchResult> {
  const plain = plainCorpus();
  const dense = tagDenseCorpus();
  // Warm the JIT on a slice of both corpora before timing.
  feed(chunkRandomly(plain.slice(0, 2_000_000) + dense.text.slice(0, 2_000_000), 4, 64));

  const rows = [
    measure('plain prose', plain, '4-64 chars', chunkRandomly(plain, 4, 64), 0),
    measure('plain prose', plain, '1 KB', chunkEvenly(plain, 1024), 0),
    measure('tag every ~200 B', dense.text, '4-64 chars', chunkRandomly(dense.text, 4, 64), dense.tags),
    measure('tag every ~200 B', dense.text, '1 KB', chunkEvenly(dense.text, 1024), dense.tags),
  ];
  return {
    plainMBps: rows[0]!.mbPerSecond,
    plain1KMBps: rows[1]!.mbPerSecond,
    tagDenseMBps: rows[2]!.mbPerSecond,
    tagDense1KMBps: rows[3]!.mbPerSecond,
    rows,
  };
}

function printTable(rows: ParserBenchRow[]): void {
  console.log('StreamingToolActionDetector throughput (best of %d passes)', PASSES);
  console.log(`${'corpus'.padEnd(18)}${'chunks'.padEnd(12)}${'MB'.padStart(8)}${'MB/s'.padStart(10)}${'tool calls'.padStart(12)}`);
  for (const r of rows) {
    console.log(
      `${r.corpus.padEnd(18)}${r.chunking.padEnd(12)}${r.megabytes.toFixed(1).padStart(8)}${r.mbPerSecond.toFixed(0).padStart(10)}${String(r.toolCalls).padStart(12)}`,
    );
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runParserBench();
  printTable(result.rows);
}
