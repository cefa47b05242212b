import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import type { EventDict } from '#core/events/execution-event.js';
import { api } from './support/chat-clients.js';
import { waitUntil } from './support/event-waits.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

/**
 * The OpenAI-compatible front door, driven by the official `openai` client, unmodified, against
 * the running system: gateway, queue, worker, and a scripted LLM behind the worker.
 */
describe('OpenAI-compatible API', () => {
  let system: TestSystem;
  let client: OpenAI;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1 });
    client = new OpenAI({ baseURL: `${system.url}/v1`, apiKey: TEST_API_KEY, maxRetries: 0 });
  });
  afterAll(async () => {
    await system?.stop();
  });

  /** Resolves once the run has streamed its first text, read live from its event stream (closed after). */
  async function firstText(runId: string): Promise<void> {
    const watching = new AbortController();
    const res = await fetch(`${system.url}/api/v1/runs/${runId}/events`, { headers: { 'x-api-key': TEST_API_KEY }, signal: watching.signal });
    const decoder = new TextDecoder();
    let seen = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        seen += decoder.decode(chunk, { stream: true });
        if (/^event: text$/m.test(seen)) return;
      }
      throw new Error(`the run ended without text: ${seen.slice(0, 500)}`);
    } finally {
      watching.abort();
    }
  }

  /** The run's events, read back through DataAgent's own API. */
  async function runEvents(runId: string): Promise<EventDict[]> {
    const res = await fetch(`${system.url}/api/v1/runs/${runId}/events`, { headers: { 'x-api-key': TEST_API_KEY } });
    return (await res.text())
      .split('\n\n')
      .map((frame) => frame.split('\n').find((line) => line.startsWith('data: ')))
      .filter((line): line is string => !!line)
      .map((line) => JSON.parse(line.slice(6)) as EventDict);
  }

  it('lists the assistants as models', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toContain('default');
  });

  it('answers whole, with the conversation it was sent and a tool the run called inside DataAgent', async () => {
    const completion = await client.chat.completions.create({
      model: 'default',
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'What did we plan?' },
        { role: 'assistant', content: 'We planned the quarterly report.' },
        { role: 'user', content: '[[tool:write_todos {"todos":[{"content":"draft the report","status":"pending"}]}]] note it' },
      ],
    });
    const content = completion.choices[0]!.message.content!;
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(content).toContain('tool `write_todos`: success');
    expect(content).toContain('Tool write_todos returned');
    // The model saw the client's earlier turns.
    const sent = system.llm.requests.find((r) => JSON.stringify(r.body.messages).includes('note it'))!;
    expect(JSON.stringify(sent.body.messages)).toContain('We planned the quarterly report.');
    expect(JSON.stringify(sent.body.messages)).toContain('Answer briefly.');
  });

  it('streams the answer in chunks that add up to the whole one', async () => {
    const stream = await client.chat.completions.create({ model: 'default', stream: true, messages: [{ role: 'user', content: '[[chunks:12]] count' }] });
    const pieces: string[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta.content;
      if (piece) pieces.push(piece);
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(pieces.length).toBeGreaterThanOrEqual(12);
    expect(pieces.join('')).toBe(Array.from({ length: 12 }, (_, i) => `tok${i} `).join(''));
    expect(finish).toBe('stop');
  });

  it('cancels the run when the client aborts a streamed request', async () => {
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'default', stream: true, messages: [{ role: 'user', content: '[[chunks:300]] [[slow:50]] long answer' }] },
      { signal: controller.signal },
    );
    let runId = '';
    let seen = 0;
    // The client's abort ends its iteration (the SDK does not throw for it) and closes the connection.
    try {
      for await (const chunk of stream) {
        runId = chunk.id.replace(/^chatcmpl-/, '');
        if (chunk.choices[0]?.delta.content && ++seen === 3) controller.abort();
      }
    } catch (err) {
      if (!controller.signal.aborted) throw err;
    }
    expect(seen).toBe(3);
    const events = await runEvents(runId);
    expect(events.at(-1)).toMatchObject({ event_type: 'done', cancelled: true });
    expect(events.filter((e) => e.event_type === 'text').length).toBeLessThan(100);
  });

  it('cancels the run when the client aborts a request waiting for the whole answer', async () => {
    const session = `openai-abort-${Date.now()}`;
    const controller = new AbortController();
    const asked = client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: '[[chunks:300]] [[slow:50]] long' }] }, { signal: controller.signal, headers: { 'X-DataAgent-Session': session } });
    // Aborted once the run has started streaming: its question is stored, and its first text is out.
    const stored = async () => (await api(system.url, 'GET', `/sessions/${session}/messages`, { apiKey: TEST_API_KEY })).body?.messages ?? [];
    await waitUntil(async () => (await stored()).length > 0, 5_000);
    await firstText((await stored())[0].run_id);
    controller.abort();
    await expect(asked).rejects.toThrow();
    const history = await api(system.url, 'GET', `/sessions/${session}/messages`, { apiKey: TEST_API_KEY });
    const events = await runEvents(history.body.messages[0].run_id);
    expect(events.at(-1)).toMatchObject({ event_type: 'done', cancelled: true });
  });

  it('refuses calls that need approval, tells the model, and answers', async () => {
    const completion = await client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: '[[tool:http_request {"url":"http://127.0.0.1:9/x","method":"POST"}]] post it' }] });
    expect(completion.choices[0]!.message.content).toContain('tool `http_request`: rejected');
    const told = system.llm.requests.flatMap((r) => r.body.messages ?? []).find((m) => m.role === 'tool' && String(m.content).includes('nobody can be asked'));
    expect(told).toBeDefined();
  });

  it('keeps the conversation as a DataAgent session when asked to', async () => {
    const session = `openai-${Date.now()}`;
    const first = await client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'first turn' }] }, { headers: { 'X-DataAgent-Session': session } });
    expect(first.choices[0]!.message.content).toBeTruthy();
    await client.chat.completions.create(
      { model: 'default', messages: [{ role: 'user', content: 'first turn' }, { role: 'assistant', content: first.choices[0]!.message.content! }, { role: 'user', content: 'second turn' }] },
      { headers: { 'X-DataAgent-Session': session } },
    );
    const history = await api(system.url, 'GET', `/sessions/${session}/messages`, { apiKey: TEST_API_KEY });
    expect(history.body.messages.filter((m: { role: string }) => m.role === 'user').map((m: { content: string }) => m.content)).toEqual(['first turn', 'second turn']);
    // Another user naming the same session gets a conversation of their own under that name, holding none of this one.
    const other = new OpenAI({ baseURL: `${system.url}/v1`, apiKey: OTHER_API_KEY, maxRetries: 0 });
    const theirs = await other.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'X-DataAgent-Session': session } }).withResponse();
    expect(theirs.response.headers.get('x-dataagent-session')).toBe(session);
    const theirHistory = await api(system.url, 'GET', `/sessions/${session}/messages`, { apiKey: OTHER_API_KEY });
    expect(theirHistory.body.messages.filter((m: { role: string }) => m.role === 'user').map((m: { content: string }) => m.content)).toEqual(['hi']);
    expect((await api(system.url, 'GET', `/sessions/${session}/messages`, { apiKey: TEST_API_KEY })).body.messages).toHaveLength(history.body.messages.length);
  });

  it("answers errors in OpenAI's shape: bad key, unknown model, bad messages; X-API-Key works too", async () => {
    const wrong = new OpenAI({ baseURL: `${system.url}/v1`, apiKey: 'not-a-key-at-all', maxRetries: 0 });
    await expect(wrong.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(client.chat.completions.create({ model: 'gpt-nope', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
    await expect(client.chat.completions.create({ model: 'default', messages: [{ role: 'assistant', content: 'no question' }] })).rejects.toBeInstanceOf(OpenAI.BadRequestError);

    // A model that says it is busy is the client's 429, with a Retry-After to honour.
    const busy = await fetch(`${system.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_API_KEY}` }, body: JSON.stringify({ model: 'default', messages: [{ role: 'user', content: '[[error:429]] busy' }] }) });
    expect(busy.status).toBe(429);
    expect(Number(busy.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await busy.json()).toMatchObject({ error: { type: 'rate_limit_error', code: 'llm_rate_limited' } });

    const raw = await fetch(`${system.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_API_KEY }, body: JSON.stringify({ model: 'default' }) });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({ error: { type: 'invalid_request_error', param: 'messages', code: 'validation_failed' } });
    const models = await fetch(`${system.url}/v1/models`, { headers: { 'x-api-key': TEST_API_KEY } });
    expect(models.status).toBe(200);
  });

  it("answers every /v1 path in OpenAI's shape: one model by id, an unknown model, an endpoint it does not offer", async () => {
    expect(await client.models.retrieve('default')).toMatchObject({ id: 'default', object: 'model', owned_by: 'dataagent' });
    await expect(client.models.retrieve('gpt-nope')).rejects.toMatchObject({ status: 404, code: 'model_not_found', type: 'not_found_error' });
    const embeddings = client.embeddings.create({ model: 'default', input: 'hi' });
    await expect(embeddings).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(embeddings).rejects.toMatchObject({ code: 'not_found', message: expect.stringContaining('POST /v1/chat/completions') });
    const unknown = await fetch(`${system.url}/v1/files`, { method: 'POST', headers: { 'x-api-key': TEST_API_KEY } });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: { message: expect.not.stringContaining('/api/v1'), type: 'not_found_error', param: null, code: 'not_found' } });
  });

  it('lets a page read the session it can continue: CORS exposes X-DataAgent-Session', async () => {
    const res = await fetch(`${system.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_API_KEY}`, origin: 'http://app.example.test' },
      body: JSON.stringify({ model: 'default', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-dataagent-session')).toBeTruthy();
    expect((res.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/,\s*/)).toEqual(expect.arrayContaining(['x-dataagent-session', 'x-dataagent-run']));
  });

  it('a failing run is one run: the SDK’s default retries stop at x-should-retry: false', async () => {
    const retrying = new OpenAI({ baseURL: `${system.url}/v1`, apiKey: TEST_API_KEY });
    const marker = `fails-once-${randomUUID()}`;
    await expect(retrying.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: `[[error:500]] ${marker}` }] })).rejects.toMatchObject({ status: 502 });
    const { body } = await api(system.url, 'GET', '/sessions?limit=1000', { apiKey: TEST_API_KEY });
    expect(body.sessions.filter((s: { title: string }) => s.title.includes(marker))).toHaveLength(1);
  });

  it('an Idempotency-Key makes a retried request follow the run the first one started', async () => {
    const key = randomUUID();
    const send = (content: string) =>
      fetch(`${system.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_API_KEY}`, 'idempotency-key': key },
        body: JSON.stringify({ model: 'default', messages: [{ role: 'user', content }] }),
      });
    const first = await send(`once ${key}`);
    const again = await send(`once ${key}`);
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.headers.get('x-dataagent-run')).toBe(first.headers.get('x-dataagent-run'));
    type Completion = { choices: Array<{ message: { content: string } }> };
    const [one, two] = [(await first.json()) as Completion, (await again.json()) as Completion];
    expect(two.choices[0]!.message.content).toBe(one.choices[0]!.message.content);
    const { body } = await api(system.url, 'GET', '/sessions?limit=1000', { apiKey: TEST_API_KEY });
    expect(body.sessions.filter((s: { title: string }) => s.title.includes(key))).toHaveLength(1);
    // The same key for another request is refused (OpenAI's 400), and not worth retrying.
    const other = await send(`something else ${key}`);
    expect(other.status).toBe(400);
    expect(other.headers.get('x-should-retry')).toBe('false');
    expect(await other.json()).toMatchObject({ error: { code: 'idempotency_key_reused' } });
  });

  it("passes the client's sampling options to the assistant's model", async () => {
    const marker = `sampled-${randomUUID()}`;
    await client.chat.completions.create({ model: 'default', temperature: 0.3, max_tokens: 80, max_completion_tokens: 64, stop: 'END', seed: 11, response_format: { type: 'json_object' }, messages: [{ role: 'user', content: marker }] });
    const sent = system.llm.requests.filter((r) => JSON.stringify(r.body.messages).includes(marker));
    expect(sent.length).toBeGreaterThan(0);
    for (const request of sent) expect(request.body).toMatchObject({ temperature: 0.3, max_tokens: 64, stop: ['END'], seed: 11, response_format: { type: 'json_object' } });
    await expect(client.chat.completions.create({ model: 'default', temperature: 3, messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 400, param: 'temperature' });
  });

  it('refuses n > 1 by name rather than answering one choice', async () => {
    await expect(client.chat.completions.create({ model: 'default', n: 2, messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 400, param: 'n', code: 'unsupported_parameter' });
  });

  describe("the client's own tools", () => {
    const weatherTool = (seen: unknown[]) => ({
      type: 'function' as const,
      function: {
        name: 'get_weather',
        description: 'The weather in a city, as the client knows it',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        parse: JSON.parse,
        function: (args: { city: string }) => {
          seen.push(args);
          return { city: args.city, sky: 'sunny' };
        },
      },
    });
    /** The scripted LLM's requests for one test's conversation. */
    const sentFor = (marker: string) => system.llm.requests.filter((r) => JSON.stringify(r.body.messages).includes(marker));

    for (const stream of [false, true]) {
      it(`completes the openai SDK's runTools round trip${stream ? ', streamed' : ''}: the model is offered the tool, the client runs it, the model reads its result`, async () => {
        const marker = `weather-${randomUUID()}`;
        const seen: unknown[] = [];
        const runner = client.chat.completions.runTools({ model: 'default', stream, messages: [{ role: 'user', content: `[[tool:get_weather {"city":"Oslo"}]] ${marker}` }], tools: [weatherTool(seen)] } as Parameters<typeof client.chat.completions.runTools>[0]);
        const answer = await runner.finalContent();
        expect(seen).toEqual([{ city: 'Oslo' }]);
        expect(answer).toContain('Tool get_weather returned: {"city":"Oslo","sky":"sunny"}');

        const [first, second, ...more] = sentFor(marker);
        expect(more).toHaveLength(0);
        // The model was offered the client's tool beside the assistant's own.
        expect(first!.body.tools).toEqual(expect.arrayContaining([{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city, as the client knows it', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }]));
        expect(first!.body.tools!.map((t) => t.function.name)).toContain('write_todos');
        // The follow-up: its call, then the client's result for it, in order, and nothing after.
        const wire = second!.body.messages!;
        const call = wire.at(-2)!;
        expect(call).toMatchObject({ role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] });
        expect(wire.at(-1)).toEqual({ role: 'tool', tool_call_id: call.tool_calls![0]!.id, content: '{"city":"Oslo","sky":"sunny"}' });
        expect(wire.at(-3)).toMatchObject({ role: 'user', content: expect.stringContaining(marker) });

        // The first run ended cleanly at the call: a tool_call nothing here ran, then done{tool_calls}.
        const firstRun = (await runner.allChatCompletions())[0]!.id.replace(/^chatcmpl-/, '');
        const events = await runEvents(firstRun);
        const calls = events.filter((e) => e.event_type === 'tool_call');
        expect(calls).toEqual([expect.objectContaining({ tool_name: 'get_weather', tool_args: { city: 'Oslo' }, client: true })]);
        expect(events.filter((e) => e.event_type === 'tool_result')).toHaveLength(0);
        expect(events.filter((e) => e.event_type === 'error')).toHaveLength(0);
        expect(events.at(-1)).toMatchObject({ event_type: 'done', cancelled: false, reason: 'tool_calls' });
      });
    }

    it('answers a call as OpenAI does: whole, with tool_calls and finish_reason tool_calls; streamed, in tool_call deltas', async () => {
      const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
      const messages = [{ role: 'user' as const, content: `[[tool:get_weather {"city":"Rome"}]] shape ${randomUUID()}` }];
      const whole = await client.chat.completions.create({ model: 'default', messages, tools });
      expect(whole.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: expect.any(String), type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }] } });

      const chunks = [];
      for await (const chunk of await client.chat.completions.create({ model: 'default', messages, tools, stream: true })) chunks.push(chunk);
      const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
      expect(deltas[0]).toMatchObject({ index: 0, id: expect.any(String), type: 'function', function: { name: 'get_weather' } });
      expect(deltas.map((d) => d.function?.arguments ?? '').join('')).toBe('{"city":"Rome"}');
      expect(chunks.at(-1)!.choices[0]).toMatchObject({ delta: {}, finish_reason: 'tool_calls' });
      expect(chunks.filter((c) => c.choices[0]?.finish_reason)).toHaveLength(1);
    });

    it('keeps the exchange in a session continued with X-DataAgent-Session: only the results are added', async () => {
      const session = `openai-tools-${randomUUID()}`;
      const seen: unknown[] = [];
      const runner = client.chat.completions.runTools({ model: 'default', messages: [{ role: 'user', content: '[[tool:get_weather {"city":"Lima"}]] kept' }], tools: [weatherTool(seen)] }, { headers: { 'X-DataAgent-Session': session } });
      await runner.finalContent();
      const history = await api(system.url, 'GET', `/sessions/${session}/messages`, { apiKey: TEST_API_KEY });
      const stored = history.body.messages as Array<{ role: string; content: string; metadata?: { tool_calls?: Array<{ id: string; name: string }>; tool_call_id?: string } }>;
      expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
      expect(stored[1]!.metadata!.tool_calls).toEqual([expect.objectContaining({ name: 'get_weather', arguments: { city: 'Lima' } })]);
      expect(stored[2]).toMatchObject({ content: '{"city":"Lima","sky":"sunny"}', metadata: { tool_call_id: stored[1]!.metadata!.tool_calls![0]!.id } });
      expect(stored[3]!.content).toContain('Tool get_weather returned');
    });

    it('refuses by name, with a 400, what the assistant cannot take: a name of its own tools, another kind of tool, another tool_choice', async () => {
      const named = (name: string) => [{ type: 'function' as const, function: { name, parameters: { type: 'object' } } }];
      await expect(client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'hi' }], tools: named('write_todos') })).rejects.toMatchObject({ status: 400, code: 'client_tool_conflict', param: 'tools', message: expect.stringContaining('write_todos') });
      await expect(client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'custom', custom: { name: 'grammar' } }] as never })).rejects.toMatchObject({ status: 400, param: 'tools[0].type' });
      await expect(client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'hi' }], tools: named('get_weather'), tool_choice: 'required' })).rejects.toMatchObject({ status: 400, param: 'tool_choice' });
      // A tool result must answer a call of the assistant message before it.
      await expect(client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'nope', content: 'x' }] })).rejects.toMatchObject({ status: 400, param: 'messages[1].tool_call_id' });
    });
  });

  describe('usage', () => {
    /** What the scripted LLM reported for the requests of one conversation, summed. */
    const reported = (marker: string) => {
      const sent = system.llm.requests.filter((r) => JSON.stringify(r.body.messages).includes(marker));
      expect(sent.length).toBeGreaterThan(0);
      const prompt = sent.reduce((sum, r) => sum + r.usage!.prompt_tokens, 0);
      const completion = sent.reduce((sum, r) => sum + r.usage!.completion_tokens, 0);
      return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    };

    it("answers whole with the run's usage: what the upstream LLM reported for each of the run's model calls, summed", async () => {
      const marker = `usage-${randomUUID()}`;
      const completion = await client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: `[[tool:write_todos {"todos":[{"content":"count","status":"pending"}]}]] ${marker}` }] });
      // Two model calls: the one that called write_todos, the one that read its result.
      expect(system.llm.requests.filter((r) => JSON.stringify(r.body.messages).includes(marker))).toHaveLength(2);
      expect(completion.usage).toEqual(reported(marker));
    });

    it('streams the usage in a last chunk with no choices when stream_options.include_usage asks, and only then', async () => {
      const marker = `usage-stream-${randomUUID()}`;
      const chunks = [];
      for await (const chunk of await client.chat.completions.create({ model: 'default', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: `[[chunks:3]] ${marker}` }] })) chunks.push(chunk);
      expect(chunks.at(-1)).toMatchObject({ object: 'chat.completion.chunk', choices: [], usage: reported(marker) });
      expect(chunks.filter((c) => c.usage)).toHaveLength(1);
      expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');

      const plain = [];
      for await (const chunk of await client.chat.completions.create({ model: 'default', stream: true, messages: [{ role: 'user', content: 'no usage asked' }] })) plain.push(chunk);
      expect(plain.some((c) => c.usage)).toBe(false);
    });

    it("adds up over a runTools round trip as the SDK counts it", async () => {
      const marker = `usage-tools-${randomUUID()}`;
      const runner = client.chat.completions.runTools({ model: 'default', messages: [{ role: 'user', content: `[[tool:get_weather {"city":"Pune"}]] ${marker}` }], tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' }, description: 'weather', function: () => 'rain' } }] });
      await runner.finalContent();
      expect(await runner.totalUsage()).toEqual(reported(marker));
    });
  });

  it("never shows the client the LLM's internal address when the model fails", async () => {
    const failed = client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: '[[error:500]] broken' }] });
    await expect(failed).rejects.toMatchObject({ status: expect.any(Number) });
    const message = await failed.catch((err: Error) => err.message);
    expect(message).toContain('500');
    expect(message).not.toContain(system.llm.baseUrl);
    expect(message).not.toContain('127.0.0.1');
  });
});
