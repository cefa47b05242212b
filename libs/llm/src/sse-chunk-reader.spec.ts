import fc from 'fast-check';
import { APIError } from 'openai';
import { Stream } from 'openai/streaming';
import { MAX_EVENT_CHARS, SseChunkReader, SseJsonDecoder } from './sse-chunk-reader.js';

const utf8 = new TextEncoder();

/** `bytes` cut at `cuts` (byte offsets, any order, duplicates allowed). */
function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const parts: Uint8Array[] = [];
  let from = 0;
  for (const to of [...at, bytes.length]) {
    parts.push(bytes.subarray(from, to));
    from = to;
  }
  return parts;
}

/** Everything the decoder yields for `parts`, and the failure it ends with, if any. */
function decodeAll(parts: Uint8Array[]): { chunks: unknown[]; failure?: Error } {
  const decoder = new SseJsonDecoder();
  const chunks: unknown[] = [];
  for (const part of parts) {
    chunks.push(...decoder.push(part));
    if (decoder.failure) return { chunks, failure: decoder.failure };
  }
  chunks.push(...decoder.end());
  return { chunks, failure: decoder.failure };
}

function responseOf(parts: Uint8Array[], onCancel?: () => void): Response {
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < parts.length) controller.enqueue(parts[i++]!);
      else controller.close();
    },
    cancel: onCancel,
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

/** What the openai SDK's own `Stream` makes of the same bytes. */
async function sdkChunks(parts: Uint8Array[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const chunk of Stream.fromSSEResponse<unknown>(responseOf(parts), new AbortController())) out.push(chunk);
  return out;
}

/** A chat-completion-like chunk: any JSON object without an `error` member. */
const chunkArb = fc
  .dictionary(
    fc.string().filter((key) => key !== 'error'),
    fc.jsonValue({ maxDepth: 2, stringUnit: 'binary' }),
    { maxKeys: 4 },
  )
  .map((chunk) => JSON.parse(JSON.stringify({ ...chunk, choices: [{ index: 0, delta: { content: 'é😀 ' } }] })) as Record<string, unknown>);

/** How one event is written: the data on one line or pretty-printed over several, with extras around it. */
const eventStyleArb = fc.record({
  multiLine: fc.boolean(),
  spaceAfterColon: fc.boolean(),
  comment: fc.boolean(),
  id: fc.boolean(),
  eventName: fc.boolean(),
});

const streamArb = fc.record({
  events: fc.array(fc.tuple(chunkArb, eventStyleArb), { maxLength: 12 }),
  newline: fc.constantFrom('\n', '\r\n', '\r'),
  afterDone: fc.boolean(),
  cuts: fc.array(fc.nat(), { maxLength: 40 }),
});

type EventStyle = typeof eventStyleArb extends fc.Arbitrary<infer T> ? T : never;

function sseText(events: Array<[Record<string, unknown>, EventStyle]>, newline: string, afterDone: boolean): string {
  const lines: string[] = [];
  for (const [chunk, style] of events) {
    if (style.comment) lines.push(': keep-alive');
    if (style.id) lines.push('id: 7');
    if (style.eventName) lines.push('event: message');
    const json = style.multiLine ? JSON.stringify(chunk, null, 1) : JSON.stringify(chunk);
    for (const line of json.split('\n')) lines.push(`data:${style.spaceAfterColon ? ' ' : ''}${line}`);
    lines.push('');
  }
  lines.push('data: [DONE]', '');
  if (afterDone) lines.push('data: {"ignored":true}', '');
  return lines.map((line) => line + newline).join('');
}

describe('SseJsonDecoder', () => {
  it('yields every chunk in order, however the bytes are split, as the SDK does', async () => {
    await fc.assert(
      fc.asyncProperty(streamArb, async ({ events, newline, afterDone, cuts }) => {
        const parts = split(utf8.encode(sseText(events, newline, afterDone)), cuts);
        const { chunks, failure } = decodeAll(parts);
        expect(failure).toBeUndefined();
        expect(chunks).toEqual(events.map(([chunk]) => chunk));
        expect(chunks).toEqual(await sdkChunks(parts));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps a character whose UTF-8 bytes arrive in separate reads', () => {
    const bytes = utf8.encode('data: {"t":"😀é"}\n\n');
    const decoder = new SseJsonDecoder();
    const chunks = [...bytes].flatMap((byte) => decoder.push(Uint8Array.of(byte)));
    expect(chunks).toEqual([{ t: '😀é' }]);
  });

  it('reports an error payload mid-stream after the chunks before it, and ignores what follows', () => {
    const decoder = new SseJsonDecoder(new Headers({ 'x-request-id': 'req_1' }));
    const chunks = decoder.push(utf8.encode('data: {"n":1}\n\ndata: {"error":{"message":"overloaded","type":"server_error"}}\n\ndata: {"n":2}\n\n'));
    expect(chunks).toEqual([{ n: 1 }]);
    expect(decoder.failure).toBeInstanceOf(APIError);
    expect(decoder.failure).toMatchObject({ message: 'overloaded', status: undefined, type: 'server_error', requestID: 'req_1' });
    expect(decoder.push(utf8.encode('data: {"n":3}\n\n'))).toEqual([]);
  });

  it('takes an `event: error` as an error even without an error member', () => {
    const decoder = new SseJsonDecoder();
    expect(decoder.push(utf8.encode('event: error\ndata: {"message":"quota exceeded"}\n\n'))).toEqual([]);
    expect(decoder.failure).toMatchObject({ message: 'quota exceeded' });
  });

  it('reports data that is not JSON', () => {
    const { chunks, failure } = decodeAll([utf8.encode('data: {"n":1}\n\ndata: {not json\n\n')]);
    expect(chunks).toEqual([{ n: 1 }]);
    expect(failure?.message).toMatch(/not JSON: \{not json/);
  });

  it('drops an event the body ends in the middle of, and yields nothing after [DONE]', () => {
    expect(decodeAll([utf8.encode('data: {"n":1}\n\ndata: {"n":2}\n')])).toEqual({ chunks: [{ n: 1 }], failure: undefined });
    const decoder = new SseJsonDecoder();
    expect(decoder.push(utf8.encode('data: [DONE]\n\ndata: {"n":1}\n\n'))).toEqual([]);
    expect(decoder.done).toBe(true);
  });

  it('reports an event that outgrows the bound instead of buffering it', () => {
    const decoder = new SseJsonDecoder();
    const line = utf8.encode(`data: "${'x'.repeat(1024 * 1024)}`);
    for (let i = 0; i < MAX_EVENT_CHARS / (1024 * 1024) + 1 && !decoder.failure; i++) expect(decoder.push(line)).toEqual([]);
    expect(decoder.failure?.message).toMatch(/longer than/);
    expect(decoder.push(utf8.encode('\n\ndata: {"n":1}\n\n'))).toEqual([]);
  });

  it('ignores events without data, comments, ids, retries and unknown fields', () => {
    const text = ': hello\r\nevent: ping\r\n\r\nid: 1\r\nretry: 10\r\nfoo: bar\r\nnocolon\r\ndata: {"n":1}\r\n\r\n';
    expect(decodeAll([utf8.encode(text)])).toEqual({ chunks: [{ n: 1 }], failure: undefined });
  });
});

describe('SseChunkReader', () => {
  it('returns the chunks of each read, then null at the end of the body', async () => {
    const reader = new SseChunkReader(responseOf([utf8.encode('data: {"n":1}\n\ndata: {"n"'), utf8.encode(':2}\n\n'), utf8.encode('data: [DONE]\n\n')]));
    expect(await reader.read()).toEqual([{ n: 1 }]);
    expect(await reader.read()).toEqual([{ n: 2 }]);
    expect(await reader.read()).toBeNull();
    expect(await reader.read()).toBeNull();
  });

  it('returns the chunks before an error event, then throws it', async () => {
    const reader = new SseChunkReader(responseOf([utf8.encode('data: {"n":1}\n\ndata: {"error":{"message":"overloaded"}}\n\n')]));
    expect(await reader.read()).toEqual([{ n: 1 }]);
    await expect(reader.read()).rejects.toMatchObject({ message: 'overloaded' });
  });

  it('cancels the body when stopped before its end, and not after', async () => {
    let cancelled = 0;
    const open = new SseChunkReader(responseOf([utf8.encode('data: {"n":1}\n\n'), utf8.encode('data: {"n":2}\n\n')], () => cancelled++));
    expect(await open.read()).toEqual([{ n: 1 }]);
    await open.cancel();
    expect(cancelled).toBe(1);

    const finished = new SseChunkReader(responseOf([utf8.encode('data: {"n":1}\n\n')], () => cancelled++));
    expect(await finished.read()).toEqual([{ n: 1 }]);
    expect(await finished.read()).toBeNull();
    await finished.cancel();
    expect(cancelled).toBe(1);
  });

  it('throws when the response has no body', () => {
    expect(() => new SseChunkReader(new Response(null))).toThrow(/without a body/);
  });
});
