import type { ChatMessage, ModelChunk, ToolSpec } from '#core/llm/chat-model.js';
import { LlmRequestError } from '#core/llm/llm-request-error.js';
import { apiKeyOf, ScriptedAnthropicServer } from '#test/support/scripted-anthropic-server.js';
import { AnthropicChatModel } from './anthropic-chat-model.js';
import { toAnthropicConversation } from './anthropic-messages.js';

const SECRET = 'sk-ant-test-SECRET-0123456789abcdef';
const weather: ToolSpec = {
  name: 'weather.get',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

async function collect(stream: AsyncIterable<ModelChunk>): Promise<ModelChunk[]> {
  const chunks: ModelChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const texts = (chunks: ModelChunk[]) => chunks.flatMap((c) => (c.type === 'text' ? [c.text] : []));
const user = (content: string): ChatMessage[] => [{ role: 'user', content }];
const live = () => new AbortController().signal;

describe('AnthropicChatModel against a scripted Messages API server', () => {
  let server: ScriptedAnthropicServer;

  beforeAll(async () => {
    server = await ScriptedAnthropicServer.start();
  });
  afterAll(() => server.stop());
  afterEach(() => {
    server.setScript();
    expect(server.refused).toEqual([]);
  });

  const model = (opts: { timeoutMs?: number } = {}) =>
    new AnthropicChatModel({ model: 'claude-test', apiKey: SECRET, baseUrl: server.baseUrl, maxRetries: 0, maxTokens: 512, ...opts });

  it('streams plain text in order, then usage and finish; the system prompt goes to `system`', async () => {
    const messages: ChatMessage[] = [{ role: 'system', content: 'be brief' }, ...user('hi [[chunks:20]]')];
    const chunks = await collect(model().stream({ messages, tools: [], signal: live() }));

    expect(texts(chunks)).toEqual(Array.from({ length: 20 }, (_, i) => `tok${i} `));
    expect(chunks.slice(-2)).toEqual([
      // 12 input, 2 of them read from the prompt cache.
      { type: 'usage', inputTokens: 12, outputTokens: 20, cachedInputTokens: 2 },
      { type: 'finish', reason: 'stop' },
    ]);
    const request = server.requests.at(-1)!;
    expect(apiKeyOf(request.headers)).toBe(SECRET);
    expect(request.body).toMatchObject({ model: 'claude-test', max_tokens: 512, stream: true, system: 'be brief', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi [[chunks:20]]' }] }] });
    expect(request.body).not.toHaveProperty('tools');
  });

  it('runs a tool_use round trip: the call comes back whole, and its result goes back as a tool_result block', async () => {
    const args = { city: 'Paris', note: 'a "quoted" {brace}' };
    server.setScript(() => [{ text: 'Let me check.' }, { toolUse: { id: 'toolu_1', name: 'weather__get', input: args } }]);
    const first = await collect(model().stream({ messages: user('weather in Paris?'), tools: [weather], signal: live() }));

    expect(first).toEqual([
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_calls', calls: [{ id: 'toolu_1', name: 'weather.get', arguments: args }] },
      { type: 'usage', inputTokens: 12, outputTokens: 2, cachedInputTokens: 2 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    expect(server.requests.at(-1)!.body.tools).toEqual([{ name: 'weather__get', description: 'Weather for a city', input_schema: weather.parameters }]);

    server.setScript();
    const conversation: ChatMessage[] = [
      { role: 'system', content: 'sys' },
      ...user('weather in Paris?'),
      { role: 'assistant', content: 'Let me check.', toolCalls: [{ id: 'toolu_1', name: 'weather.get', arguments: args }] },
      { role: 'tool', name: 'weather.get', toolCallId: 'toolu_1', content: '{"temp":21}' },
    ];
    const second = await collect(model().stream({ messages: conversation, tools: [weather], signal: live() }));

    expect(texts(second).join('')).toBe('Tool weather__get returned: {"temp":21} ');
    expect(second.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    expect(server.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'weather in Paris?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Let me check.' }, { type: 'tool_use', id: 'toolu_1', name: 'weather__get', input: args }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '{"temp":21}' }] },
    ]);
  });

  it('sends a history the API accepts: same-role turns merged, unanswered calls answered, orphan results as text', async () => {
    const messages: ChatMessage[] = [
      { role: 'assistant', content: 'an answer whose question was cut off' },
      ...user('first'),
      ...user('second'),
      { role: 'assistant', content: 'calling', toolCalls: [{ id: 'a', name: 'weather.get', arguments: { city: 'Oslo' } }] },
      ...user('never mind'),
      { role: 'tool', name: 'weather.get', toolCallId: 'late', content: 'late result' },
      { role: 'assistant', content: '' },
      { role: 'assistant', content: 'ok' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'b', name: 'weather.get', arguments: {} }] },
      { role: 'tool', name: 'weather.get', toolCallId: 'b', content: 'sunny' },
      ...user('and now?'),
    ];
    const chunks = await collect(model().stream({ messages, tools: [weather], signal: live() }));

    expect(texts(chunks).join('')).toBe('Tool weather__get returned: sunny ');
    const wire = server.requests.at(-1)!.body.messages!;
    expect(wire.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(wire[2]!.content).toEqual([{ type: 'text', text: 'first' }, { type: 'text', text: 'second' }]);
    expect(wire[4]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'a', content: expect.stringContaining('no result was recorded'), is_error: true },
      { type: 'text', text: 'never mind' },
      { type: 'text', text: 'Result of tool weather.get: late result' },
    ]);
    expect(wire[6]!.content).toEqual([{ type: 'tool_result', tool_use_id: 'b', content: 'sunny' }, { type: 'text', text: 'and now?' }]);
  });

  it("takes a client's max tokens and stop sequences, and refuses by name what the API has no word for", async () => {
    await collect(model().stream({ messages: user('hi'), tools: [], signal: live(), options: { maxTokens: 64, stop: ['END'] } }));
    expect(server.requests.at(-1)!.body).toMatchObject({ max_tokens: 64, stop_sequences: ['END'] });
    const before = server.requests.length;
    const refused = await collect(model().stream({ messages: user('hi'), tools: [], signal: live(), options: { seed: 1, responseFormat: { type: 'json_object' } } })).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LlmRequestError);
    expect((refused as LlmRequestError).message).toMatch(/takes no seed or response_format/);
    expect(server.requests.length).toBe(before);
  });

  it('maps stop reasons to the engine’s finish reasons', async () => {
    server.setScript(() => [{ text: 'cut' }, { stopReason: 'max_tokens' }]);
    expect((await collect(model().stream({ messages: user('hi'), tools: [], signal: live() }))).at(-1)).toEqual({ type: 'finish', reason: 'length' });
    server.setScript(() => [{ text: 'done' }, { stopReason: 'stop_sequence' }]);
    expect((await collect(model().stream({ messages: user('hi'), tools: [], signal: live() }))).at(-1)).toEqual({ type: 'finish', reason: 'stop' });
  });

  it('makes an overloaded answer (HTTP 529) a recoverable error carrying the retry-after', async () => {
    server.setScript(() => [{ httpError: 529, message: `Overloaded (key ${SECRET})`, retryAfter: '7' }]);
    const error = await collect(model().stream({ messages: user('hi'), tools: [], signal: live() })).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LlmRequestError);
    expect(error).toMatchObject({ status: 529, recoverable: true, retryAfterSeconds: 7 });
    expect((error as Error).message).toContain('Overloaded');
    expect((error as Error).message).toContain(server.baseUrl);
    expect((error as Error).message).not.toContain(SECRET);
    expect((error as LlmRequestError).publicMessage).not.toContain(server.baseUrl);
    expect((error as LlmRequestError).publicMessage).toContain('Overloaded');
  });

  it('makes a rate limit (429) recoverable too, and an overloaded error event mid-stream', async () => {
    server.setScript(() => [{ httpError: 429, message: 'slow down', retryAfter: '3' }]);
    const limited = await collect(model().stream({ messages: user('hi'), tools: [], signal: live() })).catch((e: unknown) => e);
    expect(limited).toMatchObject({ name: 'LlmRequestError', status: 429, recoverable: true, retryAfterSeconds: 3 });

    server.setScript(() => [{ text: 'partial ' }, { httpError: 529, message: 'Overloaded' }]);
    const seen: ModelChunk[] = [];
    const error = await (async () => {
      for await (const chunk of model().stream({ messages: user('hi'), tools: [], signal: live() })) seen.push(chunk);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([{ type: 'text', text: 'partial ' }]);
    expect(error).toMatchObject({ name: 'LlmRequestError', status: 529, recoverable: true });
    expect((error as Error).message).toMatch(/overloaded_error mid-stream: Overloaded/);
  });

  it('does not make a refused key recoverable, and names the variable to check', async () => {
    server.setScript(() => [{ httpError: 401, message: `invalid x-api-key ${SECRET}` }]);
    const error = await collect(model().stream({ messages: user('hi'), tools: [], signal: live() })).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'LlmRequestError', status: 401, recoverable: false });
    expect((error as Error).message).toContain('ANTHROPIC_API_KEY');
    expect((error as Error).message).not.toContain(SECRET);
  });

  it('cancels mid-stream: the server sees the connection closed and the iterator throws AbortError', async () => {
    const controller = new AbortController();
    const abortedBefore = server.abortedStreams;
    const seen: string[] = [];
    const consume = async () => {
      for await (const chunk of model().stream({ messages: user('[[chunks:1000]] [[slow:5]]'), tools: [], signal: controller.signal })) {
        if (chunk.type === 'text') seen.push(chunk.text);
        if (seen.length === 3) controller.abort();
      }
    };

    await expect(consume()).rejects.toMatchObject({ name: 'AbortError' });
    await server.idle();
    expect(seen).toHaveLength(3);
    expect(server.abortedStreams).toBe(abortedBefore + 1);
    expect(server.openStreams).toBe(0);
  });

  it('cancels while still waiting for the response headers', async () => {
    server.setScript(() => [{ delayMs: 60_000 }, { text: 'too late' }]);
    const controller = new AbortController();
    const abortedBefore = server.abortedStreams;
    const held = server.nextRequest();
    const consumed = collect(model().stream({ messages: user('hi'), tools: [], signal: controller.signal }));
    await held;
    controller.abort();

    await expect(consumed).rejects.toMatchObject({ name: 'AbortError' });
    await server.idle();
    expect(server.abortedStreams).toBe(abortedBefore + 1);
  });

  it('sends nothing when the signal has already fired', async () => {
    const before = server.requests.length;
    const controller = new AbortController();
    controller.abort();
    await expect(collect(model().stream({ messages: user('hi'), tools: [], signal: controller.signal }))).rejects.toMatchObject({ name: 'AbortError' });
    expect(server.requests.length).toBe(before);
  });

  it('reports a dropped connection as an error, not as a normal end', async () => {
    const error = await collect(model().stream({ messages: user('[[chunks:2]] [[drop]]'), tools: [], signal: live() })).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'LlmRequestError', recoverable: false });
    expect((error as Error).message).toContain(`LLM stream from ${server.baseUrl}`);
  });

  it('times out a stream that goes silent', async () => {
    const error = await collect(model({ timeoutMs: 200 }).stream({ messages: user('[[chunks:1]] [[hang]]'), tools: [], signal: live() })).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'LlmRequestError' });
    expect((error as Error).message).toMatch(/went silent for 200 ms/);
    await server.idle();
  });

  it('refuses to start without a key', () => {
    expect(() => new AnthropicChatModel({ model: 'claude-test', apiKey: ' ' })).toThrow(/ANTHROPIC_API_KEY/);
  });
});

describe('toAnthropicConversation', () => {
  it('joins system messages into `system` and leaves empty texts out', () => {
    expect(
      toAnthropicConversation([
        { role: 'system', content: 'one' },
        { role: 'user', content: 'hi' },
        { role: 'system', content: 'two' },
        { role: 'assistant', content: '  ' },
        { role: 'user', content: 'again' },
      ]),
    ).toEqual({ system: 'one\n\ntwo', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'text', text: 'again' }] }] });
  });
});
