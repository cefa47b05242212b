import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, lastAssistantMessageIsCompleteWithToolCalls, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { api } from './support/chat-clients.js';
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

  const transport = (apiKey = TEST_API_KEY, body?: object) => new DefaultChatTransport<UIMessage>({ api: `${system.url}/api/v1/ui/chat`, headers: { 'x-api-key': apiKey }, ...(body ? { body } : {}) });
  const userMessage = (text: string): UIMessage => ({ id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] });
  const send = (chatId: string, text: string, options: { apiKey?: string; abortSignal?: AbortSignal; body?: object } = {}) =>
    transport(options.apiKey, options.body).sendMessages({ chatId, messages: [userMessage(text)], trigger: 'submit-message', messageId: undefined, abortSignal: options.abortSignal });

  /** Reads a UI message stream to its end: every chunk (each also given to `onChunk` as it comes), and the message the AI SDK builds from them. */
  async function read(stream: ReadableStream<UIMessageChunk>, continuing?: UIMessage, onChunk?: (chunk: UIMessageChunk) => void): Promise<{ chunks: UIMessageChunk[]; message?: UIMessage }> {
    const chunks: UIMessageChunk[] = [];
    const [mine, sdks] = stream.tee();
    const collecting = (async () => {
      for await (const chunk of mine as unknown as AsyncIterable<UIMessageChunk>) {
        chunks.push(chunk);
        onChunk?.(chunk);
      }
    })();
    let message: UIMessage | undefined;
    // The reader builds on (and updates in place) the message it continues: give it a copy.
    for await (const snapshot of readUIMessageStream({ stream: sdks, ...(continuing ? { message: structuredClone(continuing) } : {}) })) message = snapshot;
    await collecting;
    return { chunks, message };
  }
  const textOf = (message?: UIMessage) => (message?.parts ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
  const runEvents = async (sessionId: string) => (await api(system.url, 'GET', `/sessions/${sessionId}/messages`, { apiKey: TEST_API_KEY })).body;

  it('streams a turn to the AI SDK: the chat id is the session, the text is the run\'s', async () => {
    const chatId = `chat-${randomUUID().slice(0, 8)}`;
    const { chunks, message } = await read(await send(chatId, 'hello there'));
    expect(chunks[0]).toMatchObject({ type: 'start', messageId: expect.any(String) });
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    expect(message).toMatchObject({ role: 'assistant', id: (chunks[0] as { messageId: string }).messageId });
    // The run's usage is the message's metadata, as the AI SDK keeps it.
    expect(message!.metadata).toEqual({ usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) } });
    expect((message!.metadata as { usage: { output_tokens: number } }).usage.output_tokens).toBeGreaterThan(0);
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
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    expect(textOf(message)).toBe(Array.from({ length: 30 }, (_, i) => `tok${i} `).join(''));
    expect(await transport().reconnectToStream({ chatId })).toBeNull();
  });

  it('stop is its own request: the stream ends with abort and the run is cancelled', async () => {
    const chatId = `chat-${randomUUID().slice(0, 8)}`;
    // Stopped once the run is streaming its answer: its first text is on the way to the client.
    let streaming!: () => void;
    const textSeen = new Promise<void>((resolve) => (streaming = resolve));
    const reading = read(await send(chatId, '[[slow:100]] [[chunks:100]]'), undefined, (chunk) => chunk.type === 'text-delta' && streaming());
    await Promise.race([textSeen, reading.then(() => Promise.reject(new Error('the stream ended before any text')))]);
    const stopped = await api(system.url, 'POST', `/ui/chat/${chatId}/stop`, { apiKey: TEST_API_KEY });
    expect(stopped.body).toMatchObject({ session_id: chatId, cancelled: true });
    const { chunks } = await reading;
    expect(chunks.at(-1)).toMatchObject({ type: 'abort' });
    // The run's own log: one done, cancelled.
    const log = await (await fetch(`${system.url}/api/v1/runs/${(chunks[0] as { messageId: string }).messageId}/events?after_seq=0`, { headers: { 'x-api-key': TEST_API_KEY } })).text();
    const dones = log.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)) as { event_type: string; cancelled?: boolean }).filter((e) => e.event_type === 'done');
    expect(dones).toEqual([expect.objectContaining({ cancelled: true })]);
  });

  it("keeps a chat id each person's own, and refuses a message without text", async () => {
    const chatId = `chat-${randomUUID().slice(0, 8)}`;
    await read(await send(chatId, 'mine'));
    // Before they use it, the id names no chat of the other person's.
    expect((await fetch(`${system.url}/api/v1/ui/chat/${chatId}/stream`, { headers: { 'x-api-key': OTHER_API_KEY } })).status).toBe(404);
    // Their message under the same id is a chat of their own, holding none of this one.
    await read(await send(chatId, 'not yours', { apiKey: OTHER_API_KEY }));
    const users = async (apiKey: string) => ((await api(system.url, 'GET', `/sessions/${chatId}/messages`, { apiKey })).body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'user').map((m) => m.content);
    expect(await users(TEST_API_KEY)).toEqual(['mine']);
    expect(await users(OTHER_API_KEY)).toEqual(['not yours']);
    const empty = await api(system.url, 'POST', '/ui/chat', { apiKey: TEST_API_KEY, body: { id: chatId, messages: [{ id: 'x', role: 'user', parts: [] }] } });
    expect(empty).toMatchObject({ status: 422, body: { error_code: 'validation_failed' } });
  });

  const writeFile = (path: string) => `[[tool:write_file {"path":"${path}","content":"approved"}]]`;
  const workspaceFile = (path: string) => join(system.dataDir, 'workspaces', 'acme', 'alice', path);
  /** The page's answer to each approval it holds, as addToolApprovalResponse leaves it. */
  const answer = (message: UIMessage, approved: boolean): UIMessage => ({
    ...message,
    parts: message.parts.map((p) => (p.type === 'dynamic-tool' && p.state === 'approval-requested' ? { ...p, state: 'approval-responded', approval: { id: p.approval.id, approved, reason: approved ? undefined : 'not today' } } : p)) as UIMessage['parts'],
  });

  it('takes an approval inside the stream: the stream stops at the question, the answer continues the same run', async () => {
    const chatId = `chat-${randomUUID().slice(0, 8)}`;
    const question = userMessage(writeFile('ui-approved.txt'));
    const first = await read(await transport().sendMessages({ chatId, messages: [question], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }));
    // The run waits; this stream ends at the question, as the AI SDK's own server does.
    expect(first.chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool-calls' });
    const asking = first.message!;
    const part = asking.parts.find((p) => p.type === 'dynamic-tool');
    expect(part).toMatchObject({ toolName: 'write_file', state: 'approval-requested', approval: { id: expect.any(String) } });
    expect(existsSync(workspaceFile('ui-approved.txt'))).toBe(false);
    // The answer sent under another chat of the same person decides nothing.
    const elsewhere = `chat-${randomUUID().slice(0, 8)}`;
    await read(await send(elsewhere, 'another chat'));
    await expect(transport().sendMessages({ chatId: elsewhere, messages: [question, answer(asking, true)], trigger: 'submit-message', messageId: asking.id, abortSignal: undefined })).rejects.toThrow(/hitl_request_not_found/);
    // Resuming while it waits (the question still open) replays to the question and ends there too.
    const replay = await read((await transport().reconnectToStream({ chatId }))!);
    expect(replay.chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool-calls' });

    const answered = answer(asking, true);
    // What useChat's sendAutomaticallyWhen checks before it sends the answer by itself.
    expect(lastAssistantMessageIsCompleteWithApprovalResponses({ messages: [question, answered] })).toBe(true);
    const next = await read(await transport().sendMessages({ chatId, messages: [question, answered], trigger: 'submit-message', messageId: answered.id, abortSignal: undefined }), answered);
    expect(next.chunks[0]).toEqual({ type: 'start', messageId: asking.id });
    expect(next.chunks.filter((c) => c.type === 'tool-approval-request')).toEqual([]);
    expect(next.chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    expect(next.message!.id).toBe(asking.id);
    expect(next.message!.parts.filter((p) => p.type === 'dynamic-tool')).toEqual([expect.objectContaining({ toolName: 'write_file', state: 'output-available' })]);
    expect(textOf(next.message).length).toBeGreaterThan(0);
    expect(existsSync(workspaceFile('ui-approved.txt'))).toBe(true);
    // Sending the same answer again (a retried request) does not decide twice: it replays the rest.
    const again = await read(await transport().sendMessages({ chatId, messages: [question, answered], trigger: 'submit-message', messageId: answered.id, abortSignal: undefined }), answered);
    expect(again.chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
  });

  it('a denied approval ends the run as DataAgent does (cancelled, rejected), and the tool never runs', async () => {
    const chatId = `chat-${randomUUID().slice(0, 8)}`;
    const question = userMessage(writeFile('ui-denied.txt'));
    const { message: asking } = await read(await transport().sendMessages({ chatId, messages: [question], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }));
    const denied = answer(asking!, false);
    const next = await read(await transport().sendMessages({ chatId, messages: [question, denied], trigger: 'submit-message', messageId: denied.id, abortSignal: undefined }), denied);
    expect(next.chunks.at(-1)).toEqual({ type: 'abort', reason: 'rejected' });
    expect(next.message!.parts.find((p) => p.type === 'dynamic-tool')).toMatchObject({ state: 'output-denied' });
    expect(existsSync(workspaceFile('ui-denied.txt'))).toBe(false);
  });

  it('a bad key and an unknown assistant are clear errors the transport raises', async () => {
    await expect(send(`chat-${randomUUID().slice(0, 8)}`, 'hi', { apiKey: 'not-a-key' })).rejects.toThrow(/api key/i);
    await expect(send(`chat-${randomUUID().slice(0, 8)}`, 'hi', { body: { assistant_id: 'no-such-assistant' } })).rejects.toThrow(/assistant.*no-such-assistant/i);
    const chosen = await read(await send(`chat-${randomUUID().slice(0, 8)}`, 'hi', { body: { assistant_id: 'default' } }));
    expect(chosen.chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
  });

  it("runs the page's own tools: the call ends the stream, the page's output continues the chat", async () => {
    const chatId = `chat-${randomUUID().slice(0, 8)}`;
    const marker = `ui-client-tool-${randomUUID().slice(0, 8)}`;
    const tools = [{ type: 'function', function: { name: 'get_weather', description: 'The weather where the person is', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const question = userMessage(`[[tool:get_weather {"city":"Oslo"}]] ${marker}`);
    const first = await read(await transport(TEST_API_KEY, { tools }).sendMessages({ chatId, messages: [question], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }));
    expect(first.chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool-calls' });
    const call = first.message!.parts.find((p) => p.type === 'dynamic-tool');
    expect(call).toMatchObject({ toolName: 'get_weather', state: 'input-available', input: { city: 'Oslo' } });
    // The page runs it (onToolCall) and adds its output (addToolOutput), as useChat does.
    const withOutput: UIMessage = {
      ...first.message!,
      parts: first.message!.parts.map((p) => (p.type === 'dynamic-tool' ? { ...p, state: 'output-available', output: { forecast: 'snow, -3 C' } } : p)) as UIMessage['parts'],
    };
    expect(lastAssistantMessageIsCompleteWithToolCalls({ messages: [question, withOutput] })).toBe(true);
    const next = await read(await transport(TEST_API_KEY, { tools }).sendMessages({ chatId, messages: [question, withOutput], trigger: 'submit-message', messageId: withOutput.id, abortSignal: undefined }), withOutput);
    expect(next.chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    expect(textOf(next.message).length).toBeGreaterThan(0);
    // The model read the page's output as the call's result, in the same session.
    const sent = system.llm.requests.filter((r) => JSON.stringify(r.body.messages).includes(marker));
    expect(JSON.stringify(sent.at(-1)!.body.messages)).toContain('snow, -3 C');
    expect(sent[0]!.body.tools).toEqual(expect.arrayContaining([expect.objectContaining({ function: expect.objectContaining({ name: 'get_weather' }) })]));
  });
});
