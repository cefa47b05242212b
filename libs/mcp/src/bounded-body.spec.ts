import { boundedBody, boundedEventStream, boundedFetch } from './bounded-body.js';
import { McpMessageTooLargeError } from './message-limits.js';

const encoder = new TextEncoder();
const limit = (maxBytes: number) => ({ server: 'big', maxBytes });

/** A body that sends `chunks` and then, unless `endless`, ends; records whether it was cancelled. */
function source(chunks: Array<string | Uint8Array>, endless = false) {
  let at = 0;
  const state = { cancelled: false, pulled: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      state.pulled++;
      if (at < chunks.length) {
        const chunk = chunks[at++]!;
        controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      } else if (endless) controller.enqueue(new Uint8Array(64 * 1024).fill(0x78));
      else controller.close();
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

/** Everything a stream passes on, one string per chunk, and the error it ended with. */
async function drain(stream: ReadableStream<Uint8Array>): Promise<{ chunks: string[]; error?: unknown }> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const chunks: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { chunks };
      chunks.push(decoder.decode(value));
    }
  } catch (error) {
    return { chunks, error };
  }
}

const event = (id: number, data = '{}') => `event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":${data}}\n\n`;

describe('boundedBody', () => {
  it('passes a body within the limit through', async () => {
    const { stream } = source(['{"a":', '1}']);
    expect(await new Response(boundedBody(stream, limit(7))).json()).toEqual({ a: 1 });
  });

  it('errors once the body passes the limit, and cancels the rest of it', async () => {
    const { stream, state } = source([], true);
    const error = await new Response(boundedBody(stream, limit(1024 * 1024))).json().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpMessageTooLargeError);
    expect((error as Error).message).toBe('MCP server big sent a message of more than 1 MiB (DATAAGENT_MCP_MAX_MESSAGE_BYTES)');
    expect(state.cancelled).toBe(true);
    expect(state.pulled).toBeLessThan(20);
  });

  it('fails a declared Content-Length past the limit before reading anything', async () => {
    const { stream, state } = source(['{}']);
    await expect(new Response(boundedBody(stream, limit(10), 11)).text()).rejects.toBeInstanceOf(McpMessageTooLargeError);
    expect(state.pulled).toBe(0);
  });
});

describe('boundedEventStream', () => {
  it('passes events on whole, however the chunks cut them', async () => {
    const whole = event(1) + event(2);
    const { stream } = source([whole.slice(0, 10), whole.slice(10, 50), whole.slice(50)]);
    const { chunks, error } = await drain(boundedEventStream(stream, limit(1024)));
    expect(error).toBeUndefined();
    expect(chunks.join('')).toBe(whole);
    expect(chunks.every((c) => c.endsWith('\n\n'))).toBe(true);
  });

  it('understands CRLF and CR line ends, also split across chunks', async () => {
    const crlf = 'data: {"id":1}\r\n\r\n';
    const cr = 'data: {"id":2}\r\r';
    const { stream } = source([crlf.slice(0, 15), crlf.slice(15, 17), crlf.slice(17), cr]);
    const { chunks } = await drain(boundedEventStream(stream, limit(1024)));
    expect(chunks.join('')).toBe(crlf + cr);
  });

  it('drops an event past the limit: the events before it pass, then it errors, tells what the data began with, and cancels the body', async () => {
    const big = `event: message\ndata: {"jsonrpc":"2.0","id":9,"result":{"text":"${'x'.repeat(5000)}"}}\n\n`;
    const { stream, state } = source([event(1) + big.slice(0, 3000), big.slice(3000), event(2)]);
    const heads: string[] = [];
    const { chunks, error } = await drain(boundedEventStream(stream, limit(2048), (head) => heads.push(head)));
    expect(chunks).toEqual([event(1)]);
    expect(error).toBeInstanceOf(McpMessageTooLargeError);
    expect(heads).toHaveLength(1);
    expect(heads[0]!.startsWith('{"jsonrpc":"2.0","id":9,"result":')).toBe(true);
    expect(state.cancelled).toBe(true);
  });

  it('catches an oversized event that arrives whole in one chunk', async () => {
    const { stream } = source([event(1, `"${'y'.repeat(3000)}"`)]);
    const { chunks, error } = await drain(boundedEventStream(stream, limit(2048)));
    expect(chunks).toEqual([]);
    expect(error).toBeInstanceOf(McpMessageTooLargeError);
  });

  it('stops an endless event after reading about the limit, not the whole stream', async () => {
    const { stream, state } = source(['data: "'], true);
    const { error } = await drain(boundedEventStream(stream, limit(1024 * 1024)));
    expect(error).toBeInstanceOf(McpMessageTooLargeError);
    expect(state.pulled).toBeLessThan(20);
    expect(state.cancelled).toBe(true);
  });
});

describe('boundedFetch', () => {
  const serve = (body: string | ReadableStream<Uint8Array>, type: string) => async () => new Response(body, { headers: { 'content-type': type } });

  it('bounds a JSON answer whole: json() rejects with the refusal instead of parsing', async () => {
    const { stream } = source([], true);
    const response = await boundedFetch(serve(stream, 'application/json'), limit(256 * 1024))('http://127.0.0.1:9/mcp');
    await expect(response.json()).rejects.toBeInstanceOf(McpMessageTooLargeError);
  });

  it('bounds an event stream per event, so a long stream of small events passes', async () => {
    const many = Array.from({ length: 100 }, (_, i) => event(i)).join('');
    const response = await boundedFetch(serve(many, 'text/event-stream'), limit(100))('http://127.0.0.1:9/mcp');
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(await response.text()).toBe(many);
  });

  it('tells onOversizedEvent about an event it dropped', async () => {
    const heads: string[] = [];
    const response = await boundedFetch(serve(event(3, `"${'z'.repeat(200)}"`), 'text/event-stream'), limit(100), (head) => heads.push(head))('http://127.0.0.1:9/sse');
    await expect(response.text()).rejects.toBeInstanceOf(McpMessageTooLargeError);
    expect(heads[0]).toMatch(/^\{"jsonrpc":"2.0","id":3,/);
  });
});
