import { randomUUID } from 'node:crypto';
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { api } from './support/chat-clients.js';
import { waitUntil } from './support/event-waits.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

/**
 * The AI SDK's UI message stream (protocol v1), judged by the `ai` package's own
 * DefaultChatTransport (what useChat uses) and readUIMessageStream: the chat id is the session,
 * the assistant message is the run, a dropped stream is not a stop and resumes, and stop is its
 * own request.
 */
describe('AI SDK UI message stream', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await TestSystem.start();
  });
  afterAll(async () => {
    await system?.stop();
  });

  const transport = (apiKey = TEST_API_KEY) => new DefaultChatTransport<UIMessage>({ api: `${system.url}/api/v1/ui/chat`, headers: { 'x-api-key': apiKey } });
  const userMessage = (text: string): UIMessage => ({ id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] });
  const send = (chatId: string, text: string, options: { apiKey?: string; abortSignal?: AbortSignal } = {}) =>
    transport(options.apiKey).sendMessages({ chatId, messages: [userMessage(text)], trigger: 'submit-message', messageId: undefined, abortSignal: options.abortSignal });

  /** Reads a UI message stream to its end: every chunk, and the message the AI SDK builds from them. */
  async function read(stream: ReadableStream<UIMessageChunk>): Promise<{ chunks: UIMessageChunk[]; message?: UIMessage }> {
    const chunks: UIMessageChunk[] = [];
    const [mine, sdks] = stream.tee();
    const collecting = (async () => {
      for await (const chunk of mine as unknown as AsyncIterable<UIMessageChunk>) chunks.push(chunk);
    })();
    let message: UIMessage | undefined;
    for await (const snapshot of readUIMessageStream({ stream: sdks })) message = snapshot;
    await collecting;
    return { chunks, message };
  }
  const textOf = (message?: UIMessage) => (message?.parts ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
  const runEvents = async (sessionId: string) => (await api(system.url, 'GET', `/sessions/${sessionId}/messages`, { apiKey: TEST_API_KEY })).body;

  it('streams a turn to the AI SDK: the chat id is the session, the text is the run\'s', async () => {
    const chatId = `chat-${randomUUID().slice(0, 8)}`;
    const { chunks, message } = await read(await send(chatId, 'hello there'));
    expect(chunks[0]).toMatchObject({ type: 'start', messageId: expect.any(String) });
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
    expect(message).toMatchObject({ role: 'assistant', id: (chunks[0] as { messageId: string }).messageId });
    expect(textOf(message).length).toBeGreaterThan(0);
    // The session is the chat, and it holds the same answer.
    const stored = await runEvents(chatId);
    expect(JSON.stringify(stored)).toContain(textOf(message).trim().slice(0, 20));
    // The next message continues the same session.
    const second = await read(await send(chatId, 'and again'));
    expect(second.chunks.at(-1)).toMatchObject({ type: 'finish' });
    expect((await api(system.url, 'GET', `/sessions/${chatId}`, { apiKey: TEST_API_KEY })).status).toBe(200);
  });

  it('shows a tool call and its result as one tool part', async () => {
    const { message } = await read(await send(`chat-${randomUUID().slice(0, 8)}`, '[[tool:ls {"path": "."}]]'));
    const tool = message?.parts.find((p) => p.type === 'dynamic-tool');
    expect(tool).toMatchObject({ type: 'dynamic-tool', toolName: 'ls', state: 'output-available', input: { path: '.' } });
  });

  it('a dropped stream is not a stop: the run goes on, and reconnecting resumes it to the end; then there is nothing to resume', async () => {
    const chatId = `chat-${randomUUID().slice(0, 8)}`;
    const abort = new AbortController();
    const stream = await send(chatId, '[[slow:60]] [[chunks:30]]', { abortSignal: abort.signal });
    const reader = stream.getReader();
    await reader.read();
    abort.abort();
    await reader.cancel().catch(() => undefined);
    const resumed = await transport().reconnectToStream({ chatId });
    expect(resumed).not.toBeNull();
    const { chunks, message } = await read(resumed!);
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
    expect(textOf(message)).toBe(Array.from({ length: 30 }, (_, i) => `tok${i} `).join(''));
    expect(await transport().reconnectToStream({ chatId })).toBeNull();
  });

  it('stop is its own request: the stream ends with abort and the run is cancelled', async () => {
    const chatId = `chat-${randomUUID().slice(0, 8)}`;
    const reading = read(await send(chatId, '[[slow:100]] [[chunks:100]]'));
    await waitUntil(async () => (await api(system.url, 'GET', `/sessions/${chatId}`, { apiKey: TEST_API_KEY })).status === 200, 10_000);
    await new Promise((r) => setTimeout(r, 500));
    const stopped = await api(system.url, 'POST', `/ui/chat/${chatId}/stop`, { apiKey: TEST_API_KEY });
    expect(stopped.body).toMatchObject({ session_id: chatId, cancelled: true });
    const { chunks } = await reading;
    expect(chunks.at(-1)).toMatchObject({ type: 'abort' });
  });

  it("refuses another person's chat, and a message without text", async () => {
    const chatId = `chat-${randomUUID().slice(0, 8)}`;
    await read(await send(chatId, 'mine'));
    await expect(send(chatId, 'not yours', { apiKey: OTHER_API_KEY })).rejects.toThrow();
    expect((await fetch(`${system.url}/api/v1/ui/chat/${chatId}/stream`, { headers: { 'x-api-key': OTHER_API_KEY } })).status).toBe(404);
    const empty = await api(system.url, 'POST', '/ui/chat', { apiKey: TEST_API_KEY, body: { id: chatId, messages: [{ id: 'x', role: 'user', parts: [] }] } });
    expect(empty).toMatchObject({ status: 422, body: { error_code: 'validation_failed' } });
  });
});
