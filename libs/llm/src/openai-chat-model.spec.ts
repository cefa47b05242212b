import type { LlmRequestError } from '#core/llm/llm-request-error.js';
import type { ChatMessage, ModelChunk, ToolSpec } from '#core/llm/chat-model.js';
import { ScriptedLlmServer } from '#test/support/scripted-llm-server.js';
import { OpenAIChatModel, toWireMessages } from './openai-chat-model.js';

const SECRET = 'sk-test-SECRET-0123456789abcdef';
const weather: ToolSpec = {
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('OpenAIChatModel against a scripted OpenAI-compatible server', () => {
  let server: ScriptedLlmServer;

  beforeAll(async () => {
    server = await ScriptedLlmServer.start({ fixedUsage: true });
  });
  afterAll(() => server.stop());
  afterEach(() => server.setScript());

  const model = (opts: { apiKey?: string; timeoutMs?: number; streamUsage?: boolean } = { apiKey: SECRET }) =>
    new OpenAIChatModel({ model: 'test-model', baseUrl: server.baseUrl, maxRetries: 0, ...opts });
  const user = (content: string): ChatMessage[] => [{ role: 'user', content }];

  async function collect(stream: AsyncIterable<ModelChunk>): Promise<ModelChunk[]> {
    const chunks: ModelChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    return chunks;
  }

  it('yields text chunks in order, unchanged, then finish', async () => {
    const chunks = await collect(model().stream({ messages: user('hi [[chunks:20]]'), tools: [], signal: new AbortController().signal }));

    const texts = chunks.filter((c) => c.type === 'text').map((c) => (c as { text: string }).text);
    expect(texts).toEqual(Array.from({ length: 20 }, (_, i) => `tok${i} `));
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    expect(server.requests.at(-1)!.headers.authorization).toBe(`Bearer ${SECRET}`);
  });

  it('yields each text chunk as soon as it arrives, before the stream ends', async () => {
    const controller = new AbortController();
    const stream = model().stream({ messages: user('[[chunks:2]] [[hang]]'), tools: [], signal: controller.signal });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const chunk of stream) {
          if (chunk.type === 'text') seen.push(chunk.text);
          if (seen.length === 2) controller.abort(); // the server is still hanging: both came early
        }
      })(),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toEqual(['tok0 ', 'tok1 ']);
  });

  it('sends the conversation and tools in the wire format', async () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather in Paris?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { role: 'tool', name: 'get_weather', toolCallId: 'call_1', content: '{"temp":21}' },
    ];
    await collect(model().stream({ messages, tools: [weather], signal: new AbortController().signal }));

    const body = server.requests.at(-1)!.body;
    expect(body).toMatchObject({ model: 'test-model', stream: true });
    expect(body.tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: weather.parameters } }]);
    expect(body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
    ]);
  });

  it('assembles a native tool call whose arguments arrive over several deltas', async () => {
    const args = { city: 'Paris', days: 3, units: 'metric', note: 'a "quoted" {brace}' };
    server.setScript(() => [{ text: 'Let me check.' }, { toolCall: { id: 'call_w', name: 'get_weather', arguments: args } }]);

    const chunks = await collect(model().stream({ messages: user('weather?'), tools: [weather], signal: new AbortController().signal }));

    expect(chunks).toEqual([
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_calls', calls: [{ id: 'call_w', name: 'get_weather', arguments: args }] },
      { type: 'usage', inputTokens: 1007, outputTokens: 102 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('asks for the usage of each streamed answer and yields what the server counted, before the finish', async () => {
    const chunks = await collect(model().stream({ messages: user('hi [[chunks:3]]'), tools: [], signal: new AbortController().signal }));
    const sent = server.requests.at(-1)!;
    expect(sent.body.stream_options).toEqual({ include_usage: true });
    expect(chunks.slice(-2)).toEqual([{ type: 'usage', inputTokens: sent.usage!.prompt_tokens, outputTokens: sent.usage!.completion_tokens }, { type: 'finish', reason: 'stop' }]);

    // A server that would refuse the field is not sent it (DATAAGENT_LLM_STREAM_USAGE=false): no usage, the engine estimates.
    const without = await collect(model({ apiKey: SECRET, streamUsage: false }).stream({ messages: user('hi'), tools: [], signal: new AbortController().signal }));
    expect(server.requests.at(-1)!.body.stream_options).toBeUndefined();
    expect(without.some((c) => c.type === 'usage')).toBe(false);
  });

  it('assembles two parallel tool calls, driven by directives', async () => {
    const chunks = await collect(
      model().stream({
        messages: user('[[tool:get_weather {"city":"Paris"}]] and [[tool:get_weather {"city":"Oslo"}]]'),
        tools: [weather],
        signal: new AbortController().signal,
      }),
    );

    const calls = chunks.find((c) => c.type === 'tool_calls');
    expect(calls).toMatchObject({
      calls: [
        { name: 'get_weather', arguments: { city: 'Paris' } },
        { name: 'get_weather', arguments: { city: 'Oslo' } },
      ],
    });
    const ids = (calls as { calls: Array<{ id: string }> }).calls.map((c) => c.id);
    expect(new Set(ids).size).toBe(2);
    expect(ids.every((id) => id.length > 0)).toBe(true);
  });

  it('answers in text once the last message is the tool result (directive flow)', async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: '[[tool:get_weather {"city":"Paris"}]]' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_p', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { role: 'tool', name: 'get_weather', toolCallId: 'call_p', content: '{"temp":21}' },
    ];
    const chunks = await collect(model().stream({ messages, tools: [weather], signal: new AbortController().signal }));
    expect(chunks.some((c) => c.type === 'tool_calls')).toBe(false);
    expect(chunks.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('')).toBe('Tool get_weather returned: {"temp":21} ');
  });

  it('stamps each text chunk with its server write time', async () => {
    const before = performance.timeOrigin + performance.now();
    const chunks = await collect(model().stream({ messages: user('[[stamp]] [[chunks:3]]'), tools: [], signal: new AbortController().signal }));
    const after = performance.timeOrigin + performance.now();
    const texts = chunks.flatMap((c) => (c.type === 'text' ? [c.text] : []));
    expect(texts).toHaveLength(3);
    for (const [i, text] of texts.entries()) {
      const match = /^⟨t=(\d+\.\d{3})⟩tok(\d+) $/.exec(text);
      expect(match).not.toBeNull();
      expect(Number(match![2])).toBe(i);
      expect(Number(match![1])).toBeGreaterThanOrEqual(before);
      expect(Number(match![1])).toBeLessThanOrEqual(after);
    }
  });

  it('passes arguments that are not JSON through as _raw', async () => {
    const chunks = await collect(
      model().stream({ messages: user('[[tool:get_weather {city: Paris}]]'), tools: [weather], signal: new AbortController().signal }),
    );
    expect(chunks.find((c) => c.type === 'tool_calls')).toMatchObject({ calls: [{ name: 'get_weather', arguments: { _raw: '{city: Paris}' } }] });
  });

  it('aborts mid-stream: the server sees the disconnect and the iterator throws AbortError', async () => {
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

  it('closes the connection when the consumer stops reading early', async () => {
    const abortedBefore = server.abortedStreams;
    const seen: string[] = [];
    for await (const chunk of model().stream({ messages: user('[[chunks:1000]] [[slow:5]]'), tools: [], signal: new AbortController().signal })) {
      if (chunk.type === 'text') seen.push(chunk.text);
      if (seen.length === 2) break;
    }
    await server.idle();
    expect(seen).toEqual(['tok0 ', 'tok1 ']);
    expect(server.abortedStreams).toBe(abortedBefore + 1);
  });

  it('aborts a stream that hangs before any text', async () => {
    const controller = new AbortController();
    const abortedBefore = server.abortedStreams;
    const held = server.nextRequest();
    const consumed = collect(model().stream({ messages: user('[[hang]]'), tools: [], signal: controller.signal }));
    await held;
    controller.abort();

    await expect(consumed).rejects.toMatchObject({ name: 'AbortError' });
    await server.idle();
    expect(server.abortedStreams).toBe(abortedBefore + 1);
  });

  it('aborts while still waiting for the response headers', async () => {
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

  it('throws AbortError at once when the signal is already aborted, without a request', async () => {
    const requestsBefore = server.requests.length;
    const controller = new AbortController();
    controller.abort();
    await expect(collect(model().stream({ messages: user('hi'), tools: [], signal: controller.signal }))).rejects.toMatchObject({ name: 'AbortError' });
    expect(server.requests.length).toBe(requestsBefore);
  });

  it("sends a client's sampling options as the Chat Completions API names them, and none it did not give", async () => {
    await collect(model().stream({ messages: user('hi'), tools: [], signal: new AbortController().signal }));
    expect(Object.keys(server.requests.at(-1)!.body)).not.toEqual(expect.arrayContaining(['temperature']));
    const options = { temperature: 0.2, maxTokens: 50, stop: ['END'], seed: 7, responseFormat: { type: 'json_object' } };
    await collect(model().stream({ messages: user('hi'), tools: [], signal: new AbortController().signal, options }));
    expect(server.requests.at(-1)!.body).toMatchObject({ temperature: 0.2, max_tokens: 50, stop: ['END'], seed: 7, response_format: { type: 'json_object' } });
  });

  it('surfaces HTTP 500 as an error naming the status and endpoint, without the API key', async () => {
    server.setScript(() => [{ httpError: 500, message: `upstream exploded (key ${SECRET})` }]);

    const error = await collect(model().stream({ messages: user('hi'), tools: [], signal: new AbortController().signal })).catch((e: unknown) => e);

    expect(error).toMatchObject({ name: 'LlmRequestError', status: 500 });
    const message = (error as Error).message;
    expect(message).toContain('500');
    expect(message).toContain('upstream exploded');
    expect(message).toContain(server.baseUrl);
    expect(message).toContain('test-model');
    expect(message).not.toContain(SECRET);
    expect(JSON.stringify(error)).not.toContain(SECRET);
    // What the person is shown keeps the status and the model, not the internal address.
    const shown = (error as LlmRequestError).publicMessage;
    expect(shown).toContain('500');
    expect(shown).toContain('test-model');
    expect(shown).not.toContain(server.baseUrl);
    expect(shown).not.toContain('127.0.0.1');
  });

  it('makes a rate limit (429) a recoverable error, and a refused request not', async () => {
    const limited = await collect(model().stream({ messages: user('[[error:429]]'), tools: [], signal: new AbortController().signal })).catch((e: unknown) => e);
    expect(limited).toMatchObject({ name: 'LlmRequestError', status: 429, recoverable: true });
    const refused = await collect(model().stream({ messages: user('[[error:400]]'), tools: [], signal: new AbortController().signal })).catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: 'LlmRequestError', status: 400, recoverable: false });
  });

  it('surfaces an error event sent mid-stream', async () => {
    server.setScript(() => [{ text: 'partial ' }, { httpError: 503, message: 'overloaded' }]);
    const seen: ModelChunk[] = [];
    const error = await (async () => {
      for await (const chunk of model().stream({ messages: user('hi'), tools: [], signal: new AbortController().signal })) seen.push(chunk);
    })().catch((e: unknown) => e);

    expect(seen).toEqual([{ type: 'text', text: 'partial ' }]);
    expect(error).toMatchObject({ name: 'LlmRequestError' });
    expect((error as Error).message).toContain('overloaded');
  });

  it('reports a dropped connection as an error, not as a normal end', async () => {
    const seen: ModelChunk[] = [];
    const error = await (async () => {
      for await (const chunk of model().stream({ messages: user('[[chunks:2]] [[drop]]'), tools: [], signal: new AbortController().signal })) seen.push(chunk);
    })().catch((e: unknown) => e);

    expect(seen.map((c) => c.type)).toEqual(['text', 'text']);
    expect(error).toMatchObject({ name: 'LlmRequestError' });
    expect((error as Error).message).toContain(`LLM stream from ${server.baseUrl}`);
    expect((error as Error).message).toContain('broke off');
  });

  it('times out a stream that goes silent', async () => {
    const error = await collect(
      model({ apiKey: SECRET, timeoutMs: 200 }).stream({ messages: user('[[chunks:1]] [[hang]]'), tools: [], signal: new AbortController().signal }),
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'LlmRequestError' });
    expect((error as Error).message).toMatch(/went silent for 200 ms/);
    await server.idle();
  });

  it('times out a server that never starts answering', async () => {
    const error = await collect(
      model({ apiKey: SECRET, timeoutMs: 200 }).stream({ messages: user('[[delay:60000]]'), tools: [], signal: new AbortController().signal }),
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'LlmRequestError' });
    expect((error as Error).message).toMatch(/did not start answering within 200 ms/);
    await server.idle();
  });

  it('reports an unreachable server with a hint', async () => {
    const gone = await ScriptedLlmServer.start();
    const baseUrl = gone.baseUrl;
    await gone.stop();
    const error = await collect(
      new OpenAIChatModel({ model: 'm', baseUrl, apiKey: SECRET, maxRetries: 0 }).stream({ messages: user('hi'), tools: [], signal: new AbortController().signal }),
    ).catch((e: unknown) => e);
    expect((error as Error).message).toContain('Could not reach the LLM');
    expect((error as Error).message).not.toContain(SECRET);
  });

  it('sends a placeholder key when only a base URL is configured', async () => {
    await collect(model({}).stream({ messages: user('hi'), tools: [], signal: new AbortController().signal }));
    expect(server.requests.at(-1)!.headers.authorization).toBe('Bearer not-needed');
  });

  it('refuses to start without key or base URL', () => {
    expect(() => new OpenAIChatModel({ model: 'm' })).toThrow(/OPENAI_API_KEY/);
  });
});

describe('toWireMessages', () => {
  it('answers tool calls left without a result and turns orphan results into user text', () => {
    const wire = toWireMessages([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'calling', toolCalls: [{ id: 'a', name: 't', arguments: {} }] },
      { role: 'user', content: 'stop that' },
      { role: 'tool', name: 't', toolCallId: 'zzz', content: 'late' },
    ]);
    expect(wire).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'calling', tool_calls: [{ id: 'a', type: 'function', function: { name: 't', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'a', content: expect.stringContaining('no result') },
      { role: 'user', content: 'stop that' },
      { role: 'user', content: 'Result of tool t: late' },
    ]);
  });
});
