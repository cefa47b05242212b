import type { ModelChunk } from './chat-model.js';
import { coalesceText } from './coalesce-text.js';

/** A model stream the test feeds chunk by chunk, with a clock the test moves. */
function feed() {
  const pending: Array<IteratorResult<ModelChunk> | Error> = [];
  let waiter: ((value: IteratorResult<ModelChunk>) => void) | undefined;
  let failer: ((err: Error) => void) | undefined;
  let returned = false;
  const clock = { t: 0 };
  const push = (item: IteratorResult<ModelChunk> | Error) => {
    if (waiter) {
      const [w, f] = [waiter, failer!];
      waiter = failer = undefined;
      if (item instanceof Error) f(item);
      else w(item);
    } else pending.push(item);
  };
  const source: AsyncIterable<ModelChunk> = {
    [Symbol.asyncIterator]: () => ({
      next: () => {
        const item = pending.shift();
        if (item instanceof Error) return Promise.reject(item);
        if (item) return Promise.resolve(item);
        return new Promise<IteratorResult<ModelChunk>>((resolve, reject) => ((waiter = resolve), (failer = reject)));
      },
      return: async () => {
        returned = true;
        return { done: true, value: undefined };
      },
    }),
  };
  return {
    source,
    clock,
    text: (text: string) => push({ done: false, value: { type: 'text', text } }),
    chunk: (value: ModelChunk) => push({ done: false, value }),
    end: () => push({ done: true, value: undefined }),
    fail: (err: Error) => push(err),
    returned: () => returned,
  };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('coalesceText', () => {
  it('hands a lone delta over at once, without waiting for the window', async () => {
    const f = feed();
    const out = coalesceText(f.source, 10, () => f.clock.t);
    const next = out.next();
    f.text('a');
    expect(await next).toEqual({ done: false, value: { type: 'text', text: 'a' } });
  });

  it('joins the deltas that queued up while the reader was busy, within the window', async () => {
    const f = feed();
    const out = coalesceText(f.source, 10, () => f.clock.t);
    const first = out.next();
    f.text('a');
    expect((await first).value).toEqual({ type: 'text', text: 'a' });
    // The reader is busy (publishing 'a'): three deltas arrive within 4 ms.
    for (const [t, text] of [[100, 'b'], [102, 'c'], [104, 'd']] as const) {
      f.clock.t = t;
      f.text(text);
      await settle();
    }
    expect((await out.next()).value).toEqual({ type: 'text', text: 'bcd' });
  });

  it('never joins deltas that arrived further apart than the window', async () => {
    const f = feed();
    const out = coalesceText(f.source, 10, () => f.clock.t);
    const first = out.next();
    f.text('x');
    expect((await first).value).toEqual({ type: 'text', text: 'x' });
    for (const [t, text] of [[100, 'a'], [105, 'b'], [110, 'c'], [111, 'd'], [130, 'e']] as const) {
      f.clock.t = t;
      f.text(text);
      await settle();
    }
    f.end();
    const all: ModelChunk[] = [];
    for await (const chunk of out) all.push(chunk);
    expect(all).toEqual([{ type: 'text', text: 'abc' }, { type: 'text', text: 'd' }, { type: 'text', text: 'e' }]);
  });

  it('never joins across a tool call, usage or the finish', async () => {
    const f = feed();
    const out = coalesceText(f.source, 10, () => f.clock.t);
    const calls: ModelChunk = { type: 'tool_calls', calls: [{ id: 'c1', name: 'ls', arguments: {} }] };
    const first = out.next();
    f.text('x');
    expect((await first).value).toEqual({ type: 'text', text: 'x' });
    f.text('a');
    f.text('b');
    f.chunk(calls);
    f.text('c');
    f.chunk({ type: 'usage', inputTokens: 1, outputTokens: 2 });
    f.text('d');
    f.chunk({ type: 'finish', reason: 'stop' });
    f.end();
    await settle();
    const all: ModelChunk[] = [];
    for await (const chunk of out) all.push(chunk);
    expect(all).toEqual([
      { type: 'text', text: 'ab' },
      calls,
      { type: 'text', text: 'c' },
      { type: 'usage', inputTokens: 1, outputTokens: 2 },
      { type: 'text', text: 'd' },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('with window 0 passes every delta through as it came', async () => {
    const f = feed();
    const out = coalesceText(f.source, 0, () => f.clock.t);
    f.text('a');
    f.text('b');
    f.end();
    const all: ModelChunk[] = [];
    for await (const chunk of out) all.push(chunk);
    expect(all).toEqual([{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }]);
  });

  it('hands over what arrived before a failure, then the failure', async () => {
    const f = feed();
    const out = coalesceText(f.source, 10, () => f.clock.t);
    f.text('a');
    f.fail(new Error('stream broke'));
    await settle();
    expect((await out.next()).value).toEqual({ type: 'text', text: 'a' });
    await expect(out.next()).rejects.toThrow('stream broke');
  });

  it('closes the source when the reader stops early', async () => {
    const f = feed();
    const out = coalesceText(f.source, 10, () => f.clock.t);
    f.text('a');
    await out.next();
    await out.return(undefined);
    expect(f.returned()).toBe(true);
  });
});
