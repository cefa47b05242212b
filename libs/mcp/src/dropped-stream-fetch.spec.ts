import { boundedFetch } from './bounded-body.js';
import { answerWhenDropped, droppedStreamFetch, HttpConnectionError } from './dropped-stream-fetch.js';

const encoder = new TextEncoder();

/** An SSE body that sends `chunks`, then breaks (`'error'`) or ends (`'end'`). */
function body(chunks: string[], then: 'error' | 'end'): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at < chunks.length) controller.enqueue(encoder.encode(chunks[at++]!));
      else if (then === 'error') controller.error(new TypeError('terminated'));
      else controller.close();
    },
  });
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

const answer = (id: number) => `event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":{"content":[]}}\n\n`;

describe('answerWhenDropped', () => {
  it('ends a stream that broke before answering with a ConnectionClosed error for each request it owed', async () => {
    const text = await readAll(answerWhenDropped(body([': keep-alive\n\n', answer(1)], 'error'), [1, 2]));
    expect(text).toContain(answer(1));
    const injected = text.split('\n').filter((l) => l.startsWith('data:') && l.includes('"error"'));
    expect(injected.map((l) => JSON.parse(l.slice(6)))).toEqual([{ jsonrpc: '2.0', id: 2, error: { code: -32000, message: expect.stringContaining('dropped the response stream before it answered (terminated)') } }]);
  });

  it('does the same for a stream that ended without answering', async () => {
    const text = await readAll(answerWhenDropped(body([], 'end'), ['a']));
    expect(text).toContain('"id":"a","error":{"code":-32000');
  });

  it('passes the break on once every request was answered, even across chunk boundaries', async () => {
    const whole = answer(7);
    const stream = answerWhenDropped(body([whole.slice(0, 20), whole.slice(20)], 'error'), [7]);
    await expect(readAll(stream)).rejects.toThrow('terminated');
  });

  it('answers each owed request with the refusal when an event was too large to read, even on a resumable stream', async () => {
    // Resuming would only send the same event again.
    const big = `id: 1\nevent: message\ndata: {"jsonrpc":"2.0","id":4,"result":{"text":"${'x'.repeat(4096)}"}}\n\n`;
    const fetchBig = boundedFetch(async () => new Response(big, { headers: { 'content-type': 'text/event-stream' } }), { server: 'big', maxBytes: 1024 });
    const guarded = await droppedStreamFetch(fetchBig)('http://x/mcp', { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call' }) });
    const injected = (await guarded.text()).split('\n').filter((l) => l.startsWith('data:'));
    expect(injected.map((l) => JSON.parse(l.slice(6)))).toEqual([
      {
        jsonrpc: '2.0',
        id: 4,
        error: { code: -32603, message: 'MCP server big sent a message of more than 1 KiB (DATAAGENT_MCP_MAX_MESSAGE_BYTES)', data: { dataagent_refused: 'too_large', limit: 1024 } },
      },
    ]);
  });

  it('leaves a stream with event ids to the SDK, which resumes it', async () => {
    const stream = answerWhenDropped(body(['id: 1\ndata: \n\n'], 'error'), [3]);
    await expect(readAll(stream)).rejects.toThrow('terminated');
  });
});

describe('droppedStreamFetch', () => {
  const failing = (cause: unknown) => async () => {
    throw Object.assign(new TypeError('fetch failed'), { cause });
  };

  it('says a refused connection never reached the server, and a cut one may have', async () => {
    const refused = droppedStreamFetch(failing(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })));
    await expect(refused('http://127.0.0.1:9/mcp', { method: 'POST' })).rejects.toMatchObject({ name: 'HttpConnectionError', unreachable: true, message: 'cannot reach 127.0.0.1:9 (ECONNREFUSED)' });
    const cut = droppedStreamFetch(failing(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' })));
    const err = await cut('http://127.0.0.1:9/mcp', { method: 'POST' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpConnectionError);
    expect(err).toMatchObject({ unreachable: false, message: 'the connection dropped before the server answered (UND_ERR_SOCKET)' });
  });

  it('rethrows an abort as it is: closing the transport is not a lost connection', async () => {
    const controller = new AbortController();
    controller.abort();
    const abort = new DOMException('aborted', 'AbortError');
    await expect(droppedStreamFetch(failing(abort))('http://127.0.0.1:9/mcp', { method: 'POST', signal: controller.signal })).rejects.not.toBeInstanceOf(HttpConnectionError);
  });

  it('guards the event streams that answer requests, and leaves other responses alone', async () => {
    const sse = new Response(body([], 'error'), { headers: { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' } });
    const guarded = await droppedStreamFetch(async () => sse)('http://x/mcp', { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call' }) });
    expect(guarded.headers.get('mcp-session-id')).toBe('s1');
    expect(await guarded.text()).toContain('"id":5,"error"');

    const notification = new Response(body([], 'error'), { headers: { 'content-type': 'text/event-stream' } });
    const passed = await droppedStreamFetch(async () => notification)('http://x/mcp', { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    expect(passed).toBe(notification);
  });
});
