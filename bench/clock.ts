import { performance } from 'node:perf_hooks';

/**
 * The one clock every figure of the bench uses: epoch milliseconds with sub-millisecond
 * resolution, `performance.timeOrigin + performance.now()`. The scripted LLM server stamps its
 * chunks with the same expression, so a stamp from another process can be subtracted from it.
 */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

const STAMP = /^⟨t=(\d+(?:\.\d+)?)⟩/;

/**
 * Reads the write time the scripted LLM server put in front of a text chunk (`[[stamp]]`).
 *
 * @param content A text event's content.
 * @returns The stamp in epoch ms, or undefined when the content carries none.
 */
export function readStamp(content: unknown): number | undefined {
  if (typeof content !== 'string') return undefined;
  const match = STAMP.exec(content);
  return match ? Number(match[1]) : undefined;
}

const STAMPS = /⟨t=(\d+(?:\.\d+)?)⟩/g;

/**
 * Reads every write time in a text event's content: with text coalescing on
 * (DATAAGENT_TEXT_COALESCE_MS) one event may carry several stamped chunks.
 *
 * @returns The stamps in epoch ms, in order; empty when the content carries none.
 */
export function readStamps(content: unknown): number[] {
  if (typeof content !== 'string') return [];
  return Array.from(content.matchAll(STAMPS), (match) => Number(match[1]));
}
