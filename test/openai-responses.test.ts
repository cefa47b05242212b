import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { streamText } from 'ai';
import OpenAI from 'openai';
import type { EventDict } from '#core/events/execution-event.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

type StreamEvent = OpenAI.Responses.ResponseStreamEvent;

/**
 * OpenAI's Responses API at /v1/responses, judged by the `openai` SDK's own `responses` and by
 * `@ai-sdk/openai`'s default provider: each response is a projection of one run's event log.
 */
describe('OpenAI Responses API', () => {
  let system: TestSystem;
  let client: OpenAI;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1 });
    client = new OpenAI({ baseURL: `${system.url}/v1`, apiKey: TEST_API_KEY, maxRetries: 0 });
  });
  afterAll(async () => {
    await system?.stop();
  });

  const runOf = (responseId: string) => /^resp_([0-9a-f-]{36})/.exec(responseId)![1]!;
  const tokens = (n: number) => Array.from({ length: n }, (_, i) => `tok${i} `).join('');

  /** The run's events, read back through DataAgent's own API. */
  async function runEvents(runId: string): Promise<EventDict[]> {
    const res = await fetch(`${system.url}/api/v1/runs/${runId}/events`, { headers: { 'x-api-key': TEST_API_KEY } });
    return (await res.text())
      .split('\n\n')
      .map((frame) => frame.split('\n').find((line) => line.startsWith('data: ')))
      .filter((line): line is string => !!line)
      .map((line) => JSON.parse(line.slice(6)) as EventDict);
  }

  async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
    const events: StreamEvent[] = [];
    for await (const event of stream) events.push(event);
    return events;
  }
  const deltas = (events: StreamEvent[]) => events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');

  it('streams a response: created, in_progress, the text as deltas, completed, every sequence_number once and in order', async () => {
    const events = await collect(await client.responses.create({ model: 'default', input: '[[chunks:8]] count', stream: true }));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0]).toMatchObject({ type: 'response.created', response: { object: 'response', model: 'default' } });
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.done', 'response.output_item.done']));
    expect(deltas(events)).toBe(tokens(8));
    const last = events.at(-1)!;
    expect(last.type).toBe('response.completed');
    const done = (last as OpenAI.Responses.ResponseCompletedEvent).response;
    expect(done).toMatchObject({ status: 'completed', usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) } });
    // The run's log agrees: one run, ended once, not cancelled.
    expect((await runEvents(runOf(done.id))).filter((e) => e.event_type === 'done')).toEqual([expect.objectContaining({ cancelled: false })]);
  });

  it('answers whole, with output items and output_text, and keeps the conversation for previous_response_id', async () => {
    const first = await client.responses.create({ model: 'default', input: [{ role: 'user', content: [{ type: 'input_text', text: 'my first turn' }] }], instructions: 'be brief' });
    expect(first).toMatchObject({ object: 'response', status: 'completed', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text' }] }] });
    expect(first.output_text.length).toBeGreaterThan(0);
    const second = await client.responses.create({ model: 'default', input: 'my second turn', previous_response_id: first.id });
    expect(second.status).toBe('completed');
    // The same session: the model saw the first turn, after the instructions.
    const sent = system.llm.requests.find((r) => JSON.stringify(r.body.messages).includes('my second turn'))!;
    const wire = JSON.stringify(sent.body.messages);
    expect(wire).toContain('my first turn');
    expect(wire).toContain('be brief');
    const retrieved = await client.responses.retrieve(second.id);
    expect(retrieved).toMatchObject({ id: second.id, status: 'completed', output_text: second.output_text });
    await expect(client.responses.create({ model: 'default', input: 'x', previous_response_id: first.id, instructions: 'other' })).rejects.toMatchObject({ status: 400, param: 'instructions' });
  });

  it('resumes a stream cut mid-answer with retrieve(stream, starting_after): the joined text is the whole answer, every sequence_number once', async () => {
    const stream = await client.responses.create({ model: 'default', input: '[[slow:60]] [[chunks:30]]', stream: true });
    const seen: StreamEvent[] = [];
    for await (const event of stream) {
      seen.push(event);
      if (seen.filter((e) => e.type === 'response.output_text.delta').length === 5) break;
    }
    const id = (seen[0] as OpenAI.Responses.ResponseCreatedEvent).response.id;
    const rest = await collect(await client.responses.retrieve(id, { stream: true, starting_after: seen.at(-1)!.sequence_number }));
    const all = [...seen, ...rest];
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    expect(deltas(all)).toBe(tokens(30));
    expect(all.at(-1)).toMatchObject({ type: 'response.completed' });
    // A dropped stream is not a stop: the run went on to its end.
    expect((await runEvents(runOf(id))).filter((e) => e.event_type === 'done')).toEqual([expect.objectContaining({ cancelled: false })]);
    // Replaying from the start gives the same events again.
    expect(await collect(await client.responses.retrieve(id, { stream: true }))).toEqual(all);
  });

  it('runs in the background, and cancel stops the run: status cancelled, one done in its log', async () => {
    const started = await client.responses.create({ model: 'default', input: '[[slow:100]] [[chunks:200]]', background: true });
    expect(started).toMatchObject({ background: true, status: expect.stringMatching(/^(queued|in_progress)$/) });
    // Wait until it is answering.
    const watching = await client.responses.retrieve(started.id, { stream: true });
    for await (const event of watching) if (event.type === 'response.output_text.delta') break;
    const cancelled = await client.responses.cancel(started.id);
    expect(cancelled).toMatchObject({ id: started.id, status: 'cancelled' });
    expect(cancelled.output_text.length).toBeGreaterThan(0);
    expect((await client.responses.retrieve(started.id)).status).toBe('cancelled');
    const log = await runEvents(runOf(started.id));
    expect(log.filter((e) => e.event_type === 'done')).toEqual([expect.objectContaining({ cancelled: true })]);
    const replay = await collect(await client.responses.retrieve(started.id, { stream: true }));
    expect(replay.at(-1)).toMatchObject({ type: 'response.incomplete', response: { status: 'cancelled' } });
  });

  it("parses with the openai SDK's responses.stream helper: its final response is the one retrieve answers", async () => {
    const stream = client.responses.stream({ model: 'default', input: '[[chunks:3]] [[tool:ls {"path": "."}]] then' });
    const final = await stream.finalResponse();
    expect(final.status).toBe('completed');
    expect(final.output.map((item) => item.type)).toEqual(['message', 'mcp_call', 'message']);
    const retrieved = await client.responses.retrieve(final.id);
    expect(final.output).toMatchObject(retrieved.output);
    expect(retrieved.output_text).toBe(final.output_text);
  });

  it("shows the assistant's own tool as an mcp_call item with its output", async () => {
    const events = await collect(await client.responses.create({ model: 'default', input: '[[tool:ls {"path": "."}]] list', stream: true }));
    const items = events.flatMap((e) => (e.type === 'response.output_item.done' ? [e.item] : []));
    expect(items).toContainEqual(expect.objectContaining({ type: 'mcp_call', name: 'ls', server_label: 'dataagent', arguments: '{"path":"."}', status: 'completed', output: expect.any(String) }));
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { output_text: expect.stringContaining('Tool ls returned') } });
  });

  it('asks for an approval with an mcp_approval_request; an mcp_approval_response continues the same run', async () => {
    const path = `files/approved-${randomUUID().slice(0, 8)}.txt`;
    const asked = await client.responses.create({ model: 'default', input: `[[tool:write_file {"path":"${path}","content":"yes"}]]` });
    expect(asked.status).toBe('completed');
    const request = asked.output.find((item) => item.type === 'mcp_approval_request') as OpenAI.Responses.ResponseOutputItem.McpApprovalRequest;
    expect(request).toMatchObject({ name: 'write_file', server_label: 'dataagent', arguments: expect.stringContaining(path) });
    const file = join(system.dataDir, 'workspaces', 'acme', 'alice', path);
    expect(existsSync(file)).toBe(false);

    const events = await collect(
      await client.responses.create({ model: 'default', previous_response_id: asked.id, input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }], stream: true }),
    );
    const done = (events.at(-1) as OpenAI.Responses.ResponseCompletedEvent).response;
    expect(done.status).toBe('completed');
    expect(runOf(done.id)).toBe(runOf(asked.id));
    expect(done.output).toContainEqual(expect.objectContaining({ type: 'mcp_call', name: 'write_file', status: 'completed', approval_request_id: request.id }));
    expect(readFileSync(file, 'utf8')).toBe('yes');
    // One run, one done.
    expect((await runEvents(runOf(asked.id))).filter((e) => e.event_type === 'done')).toHaveLength(1);
    // The request takes one answer.
    await expect(client.responses.create({ model: 'default', previous_response_id: asked.id, input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: false }] })).rejects.toMatchObject({ status: 409 });
  });

  it('ends a rejected approval cancelled, and the tool never runs', async () => {
    const path = `files/rejected-${randomUUID().slice(0, 8)}.txt`;
    const asked = await client.responses.create({ model: 'default', input: `[[tool:write_file {"path":"${path}","content":"no"}]]` });
    const request = asked.output.find((item) => item.type === 'mcp_approval_request')!;
    const answered = await client.responses.create({ model: 'default', previous_response_id: asked.id, input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: false }] });
    expect(answered.status).toBe('cancelled');
    expect(answered.output).toContainEqual(expect.objectContaining({ type: 'mcp_call', name: 'write_file', status: 'failed' }));
    expect(existsSync(join(system.dataDir, 'workspaces', 'acme', 'alice', path))).toBe(false);
  });

  it("returns a call to the client's function tool as a function_call item; a function_call_output continues", async () => {
    const marker = `weather-${randomUUID()}`;
    const tools: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false }];
    const first = await client.responses.create({ model: 'default', input: `[[tool:get_weather {"city":"Oslo"}]] ${marker}`, tools });
    const call = first.output.find((item) => item.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ name: 'get_weather', arguments: '{"city":"Oslo"}', call_id: expect.any(String) });
    const second = await client.responses.create({ model: 'default', previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"sky":"sunny"}' }], tools });
    expect(second.status).toBe('completed');
    expect(second.output_text).toContain('Tool get_weather returned: {"sky":"sunny"}');
    // The model read the client's result for its call.
    const sent = system.llm.requests.filter((r) => JSON.stringify(r.body.messages).includes(marker));
    expect(sent.at(-1)!.body.messages!.at(-1)).toEqual({ role: 'tool', tool_call_id: call.call_id, content: '{"sky":"sunny"}' });
    await expect(client.responses.create({ model: 'default', previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: 'nope', output: 'x' }], tools })).rejects.toMatchObject({ status: 400 });
  });

  it("answers in OpenAI's error shape: a bad key 401, an unknown assistant 404, another person's response 404", async () => {
    const stranger = new OpenAI({ baseURL: `${system.url}/v1`, apiKey: 'not-a-key', maxRetries: 0 });
    await expect(stranger.responses.create({ model: 'default', input: 'hi' })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(client.responses.create({ model: 'gpt-nope', input: 'hi' })).rejects.toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
    const mine = await client.responses.create({ model: 'default', input: 'mine' });
    const bob = new OpenAI({ baseURL: `${system.url}/v1`, apiKey: OTHER_API_KEY, maxRetries: 0 });
    await expect(bob.responses.retrieve(mine.id)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
    await expect(bob.responses.cancel(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.retrieve('resp_nope')).rejects.toMatchObject({ status: 404 });
    // A later response of a run opens at one of its approval requests: another seq names none.
    await expect(client.responses.retrieve(`${mine.id}_1`)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
  });

  it("streams an answer through @ai-sdk/openai's default provider (the Responses API) and streamText", async () => {
    const openai = createOpenAI({ baseURL: `${system.url}/v1`, apiKey: TEST_API_KEY });
    const errors: unknown[] = [];
    const result = streamText({ model: openai('default'), prompt: '[[chunks:6]] hello', onError: ({ error }) => void errors.push(error) });
    let text = '';
    for await (const piece of result.textStream) text += piece;
    expect(errors).toEqual([]);
    expect(text).toBe(tokens(6));
    expect(await result.finishReason).toBe('stop');
    expect((await result.usage).outputTokens).toBeGreaterThan(0);
  });

  it("shows the assistant's own tool to @ai-sdk/openai as a provider-executed tool call with its result", async () => {
    const openai = createOpenAI({ baseURL: `${system.url}/v1`, apiKey: TEST_API_KEY });
    const result = streamText({ model: openai('default'), prompt: '[[tool:ls {"path": "."}]] list' });
    const parts = [];
    for await (const part of result.fullStream) parts.push(part);
    expect(parts.filter((p) => p.type === 'error')).toEqual([]);
    expect(parts).toContainEqual(expect.objectContaining({ type: 'tool-call', toolName: 'mcp.ls', providerExecuted: true }));
    expect(parts).toContainEqual(expect.objectContaining({ type: 'tool-result', toolName: 'mcp.ls', output: expect.objectContaining({ name: 'ls', output: expect.stringContaining('entries') }) }));
    expect(await result.text).toContain('Tool ls returned');
  });
});
