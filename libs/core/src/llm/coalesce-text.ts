import type { ModelChunk } from './chat-model.js';

/** The longest coalescing window allowed (DATAAGENT_TEXT_COALESCE_MS). */
export const MAX_TEXT_COALESCE_MS = 10;

/**
 * A model stream whose text deltas are joined when they queue up: the source is read ahead as
 * fast as it delivers, and each time the reader asks for the next chunk, the text deltas already
 * waiting that arrived within `windowMs` of the first are handed over as one. A reader that keeps
 * up gets every delta as it came, and a lone delta is never held back: the window only bounds
 * how far apart in time the deltas joined into one may have arrived. Anything but text (a tool
 * call, usage, the finish) is passed as it is and never joined across. `windowMs` 0: the source
 * as it is.
 *
 * So a run whose events wait on a slow hop (Redis, a busy event loop) sends fewer, larger text
 * events instead of falling further behind; the text is the same.
 */
export async function* coalesceText(source: AsyncIterable<ModelChunk>, windowMs: number, now: () => number = () => performance.now()): AsyncGenerator<ModelChunk> {
  if (!(windowMs > 0)) {
    yield* source;
    return;
  }
  const iterator = source[Symbol.asyncIterator]();
  const queue: Array<{ chunk: ModelChunk; at: number }> = [];
  let ended = false;
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  const pump = async () => {
    try {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        queue.push({ chunk: next.value, at: now() });
        wake?.();
      }
    } catch (error) {
      failure = { error };
    } finally {
      ended = true;
      wake?.();
    }
  };
  void pump();
  try {
    for (;;) {
      const first = queue.shift();
      if (!first) {
        if (ended) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      if (first.chunk.type !== 'text') {
        yield first.chunk;
        continue;
      }
      let text = first.chunk.text;
      while (queue[0]?.chunk.type === 'text' && queue[0].at - first.at <= windowMs) text += (queue.shift()!.chunk as { text: string }).text;
      yield text === first.chunk.text ? first.chunk : { type: 'text', text };
    }
    if (failure) throw failure.error;
  } finally {
    // The reader stopped early (a cancel): close the source. Not awaited: its pending read ends
    // when the request is aborted, and the reader must not wait for that.
    if (!ended) void Promise.resolve(iterator.return?.()).catch(() => undefined);
  }
}
