import { randomUUID } from 'node:crypto';
import { HttpAgent, type AgentSubscriber, type BaseEvent, type Interrupt, type Tool } from '@ag-ui/client';
import type { EventDict } from '#core/events/execution-event.js';
import { api } from './support/chat-clients.js';
import { waitUntil } from './support/event-waits.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

/**
 * AG-UI 1.0, judged by `@ag-ui/client`'s own HttpAgent as it is: the thread is the session, an
 * approval is an interrupt outcome answered by the next run's `resume`, a dropped connection is
 * not a stop (a run with no new input re-attaches where the client stood), stop is its own request.
 */
describe('AG-UI (HttpAgent)', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await TestSystem.start();
  });
  afterAll(async () => {
    await system?.stop();
  });

  const agent = (options: { apiKey?: string; path?: string; threadId?: string } = {}) =>
    new HttpAgent({ url: `${system.url}/api/v1/ag-ui${options.path ?? ''}`, headers: { 'x-api-key': options.apiKey ?? TEST_API_KEY }, threadId: options.threadId ?? `thread-${randomUUID().slice(0, 8)}` });
  const say = (a: HttpAgent, text: string) => a.addMessage({ id: randomUUID(), role: 'user', content: text });

  /** A subscriber that keeps every event HttpAgent applied, and how its runs finished. */
  function recorder(also: AgentSubscriber = {}) {
    const events: BaseEvent[] = [];
    const finished: Array<{ outcome: string; interrupts?: Interrupt[]; pendingToolCallIds?: string[] }> = [];
    const subscriber: AgentSubscriber = {
      ...also,
      onEvent: (params) => {
        events.push(params.event);
        return also.onEvent?.(params);
      },
      onRunFinishedEvent: (params) => {
        finished.push({ outcome: params.outcome, ...('interrupts' in params ? { interrupts: params.interrupts } : {}), ...('pendingToolCallIds' in params ? { pendingToolCallIds: params.pendingToolCallIds } : {}) });
      },
    };
    return { events, finished, subscriber };
  }
  const types = (events: BaseEvent[]) => events.map((e) => e.type);
  /** The DataAgent run an AG-UI run read, as its RUN_STARTED names it. */
  const dataAgentRun = (events: BaseEvent[]) => (events[0]!.metadata as { dataagent: { run_id: string } }).dataagent.run_id;
  const assistantTexts = (a: HttpAgent) => a.messages.filter((m) => m.role === 'assistant' && typeof m.content === 'string' && m.content !== '').map((m) => m.content as string);

  /** The run's events, read back through DataAgent's own API: to its done, or what came before `signal` ends the read. */
  async function runEvents(runId: string, signal?: AbortSignal): Promise<EventDict[]> {
    const res = await fetch(`${system.url}/api/v1/runs/${runId}/events`, { headers: { 'x-api-key': TEST_API_KEY } });
    let text = '';
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const cut = () => void reader.cancel().catch(() => undefined);
    signal?.addEventListener('abort', cut);
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    signal?.removeEventListener('abort', cut);
    return text
      .split('\n\n')
      .map((frame) => frame.split('\n').find((line) => line.startsWith('data: ')))
      .filter((line): line is string => !!line)
      .map((line) => JSON.parse(line.slice(6)) as EventDict);
  }

  it("streams an answer: RUN_STARTED, one text message, RUN_FINISHED; the thread is the session and the next run continues it", async () => {
    const a = agent();
    say(a, 'hello there');
    const first = recorder();
    await a.runAgent({}, first.subscriber);
    expect(types(first.events)[0]).toBe('RUN_STARTED');
    expect(types(first.events).slice(-2)).toEqual(['TEXT_MESSAGE_END', 'RUN_FINISHED']);
    expect(first.finished).toEqual([{ outcome: 'success', pendingToolCallIds: [] }]);
    const [answer] = assistantTexts(a);
    expect(answer!.length).toBeGreaterThan(0);
    const stored = await api(system.url, 'GET', `/sessions/${a.threadId}/messages`, { apiKey: TEST_API_KEY });
    expect(stored.status).toBe(200);
    expect(stored.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    expect(stored.body.messages[1].content).toBe(answer);

    say(a, 'and again');
    const second = recorder();
    await a.runAgent({}, second.subscriber);
    expect(second.finished).toEqual([{ outcome: 'success', pendingToolCallIds: [] }]);
    expect(dataAgentRun(second.events)).not.toBe(dataAgentRun(first.events));
    expect((await api(system.url, 'GET', `/sessions/${a.threadId}/messages`, { apiKey: TEST_API_KEY })).body.messages).toHaveLength(4);
  });

  it('a cut connection is not a stop: running again with no new message re-attaches where the client stood, to the full text with no gap and no duplicate', async () => {
    const a = agent();
    say(a, '[[slow:60]] [[chunks:30]]');
    const cut = recorder({
      onTextMessageContentEvent: ({ textMessageBuffer }) => {
        // HttpAgent's abortRun drops the connection mid-answer.
        if (textMessageBuffer.length > 10) a.abortRun();
      },
    });
    await a.runAgent({}, cut.subscriber);
    expect(cut.finished).toEqual([]);
    const partial = assistantTexts(a)[0]!;
    const full = Array.from({ length: 30 }, (_, i) => `tok${i} `).join('');
    expect(partial.length).toBeGreaterThan(0);
    expect(full.startsWith(partial) && partial.length < full.length).toBe(true);

    const resumed = recorder();
    await a.runAgent({}, resumed.subscriber);
    expect(resumed.finished).toEqual([{ outcome: 'success', pendingToolCallIds: [] }]);
    // The same DataAgent run, picked up where the client stood: the same message goes on.
    expect(dataAgentRun(resumed.events)).toBe(dataAgentRun(cut.events));
    expect(types(resumed.events).slice(0, 2)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START']);
    const deltas = resumed.events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e) => e.delta as string).join('');
    expect(partial + deltas).toBe(full);
    expect(assistantTexts(a)).toEqual([full]);
    // The run was never stopped.
    const done = (await runEvents(dataAgentRun(cut.events))).filter((e) => e.event_type === 'done');
    expect(done).toEqual([expect.objectContaining({ cancelled: false })]);
  });

  /** A fetch whose response ends after the first `frames` SSE frames, as when a proxy or the network drops the connection. */
  const cutAfter = (frames: number) => async (url: string, init: RequestInit): Promise<Response> => {
    const res = await fetch(url, init);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let buffer = '';
    let passed = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0 && passed < frames) {
          controller.enqueue(encoder.encode(buffer.slice(0, end + 2)));
          buffer = buffer.slice(end + 2);
          passed++;
        }
        if (passed >= frames) {
          await reader.cancel();
          controller.close();
        }
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };

  it('a client cut before any text names its cursor in forwardedProps: after_seq 0 reads the active run from its start', async () => {
    const threadId = `thread-${randomUUID().slice(0, 8)}`;
    const cut = new HttpAgent({ url: `${system.url}/api/v1/ag-ui`, headers: { 'x-api-key': TEST_API_KEY }, threadId, fetch: cutAfter(1) });
    say(cut, '[[slow:60]] [[chunks:30]]');
    const first = recorder();
    await cut.runAgent({}, first.subscriber);
    expect(types(first.events)).toEqual(['RUN_STARTED']);
    expect(first.finished).toEqual([]);
    // Its messages end with its own: as a new turn that is refused while the run goes on.
    const a = agent({ threadId });
    a.setMessages(cut.messages);
    await expect(a.runAgent({})).rejects.toMatchObject({ status: 409, payload: { error_code: 'run_in_progress' } });
    const resumed = recorder();
    await a.runAgent({ forwardedProps: { dataagent: { after_seq: 0 } } }, resumed.subscriber);
    expect(dataAgentRun(resumed.events)).toBe(dataAgentRun(first.events));
    expect(assistantTexts(a)).toEqual([Array.from({ length: 30 }, (_, i) => `tok${i} `).join('')]);
    expect(resumed.finished).toEqual([{ outcome: 'success', pendingToolCallIds: [] }]);
  });

  it('stops a run with its own request: the AG-UI run finishes cancelled, and the log has one done, cancelled', async () => {
    const a = agent();
    say(a, '[[slow:100]] [[chunks:100]]');
    const run = recorder();
    const running = a.runAgent({}, run.subscriber);
    await waitUntil(() => run.events.some((e) => e.type === 'TEXT_MESSAGE_CONTENT'), 15_000);
    const stopped = await api(system.url, 'POST', `/ag-ui/${a.threadId}/stop`, { apiKey: TEST_API_KEY });
    expect(stopped).toMatchObject({ status: 200, body: { session_id: a.threadId, cancelled: true } });
    await running;
    expect(run.finished).toEqual([{ outcome: 'cancelled' }]);
    expect(types(run.events).at(-1)).toBe('RUN_FINISHED');
    const done = (await runEvents(dataAgentRun(run.events))).filter((e) => e.event_type === 'done');
    expect(done).toEqual([expect.objectContaining({ cancelled: true })]);
    // Another person cannot stop it, and nothing is left to stop.
    expect((await api(system.url, 'POST', `/ag-ui/${a.threadId}/stop`, { apiKey: OTHER_API_KEY })).status).toBe(404);
    expect((await api(system.url, 'POST', `/ag-ui/${a.threadId}/stop`, { apiKey: TEST_API_KEY })).body).toMatchObject({ cancelled: false, reason: 'no_active_run' });
  });

  it('takes an approval: the run ends with an interrupt, and the next run\'s resume answers it and streams the same DataAgent run on', async () => {
    const a = agent();
    say(a, '[[tool:write_file {"path":"ag-ui-approved.txt","content":"yes"}]]');
    const asked = recorder();
    await a.runAgent({}, asked.subscriber);
    expect(asked.finished).toHaveLength(1);
    expect(asked.finished[0]!.outcome).toBe('interrupt');
    const interrupt = asked.finished[0]!.interrupts![0]!;
    const call = asked.events.find((e) => e.type === 'TOOL_CALL_START')!;
    expect(call).toMatchObject({ toolCallName: 'write_file' });
    expect(interrupt).toMatchObject({ reason: 'tool_approval', toolCallId: call.toolCallId });
    expect(a.pendingInterrupts.map((i) => i.id)).toEqual([interrupt.id]);
    // The DataAgent run waits for the answer: its log so far ends at the request, with no done.
    const runId = dataAgentRun(asked.events);
    const sofar = await runEvents(runId, AbortSignal.timeout(1_000));
    expect(sofar.at(-1)).toMatchObject({ event_type: 'hitl_request', request_id: interrupt.id });
    // HttpAgent itself refuses to run on without an answer.
    await expect(a.runAgent({})).rejects.toThrow(/pending interrupt/);

    // A second copy of the client, as it stood at the interrupt: it will send the same answer again.
    const late = a.clone() as HttpAgent;
    const answered = recorder();
    await a.runAgent({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] }, answered.subscriber);
    expect(dataAgentRun(answered.events)).toBe(runId);
    expect(answered.finished).toEqual([{ outcome: 'success', pendingToolCallIds: [] }]);
    expect(answered.events.find((e) => e.type === 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: call.toolCallId, metadata: { status: 'success' } });
    expect(a.pendingInterrupts).toEqual([]);
    const log = await runEvents(runId);
    expect(log.filter((e) => e.event_type === 'tool_result')).toEqual([expect.objectContaining({ tool_call_id: call.toolCallId, status: 'success' })]);
    expect(log.filter((e) => e.event_type === 'done')).toEqual([expect.objectContaining({ cancelled: false })]);

    // The same resume sent again (its stream was cut): the decision stands once, and the run's continuation is read again.
    const again = recorder();
    await late.runAgent({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: false } }] }, again.subscriber);
    expect(types(again.events).filter((t) => t !== 'TEXT_MESSAGE_CONTENT')).toEqual(types(answered.events).filter((t) => t !== 'TEXT_MESSAGE_CONTENT'));
    expect(again.events.find((e) => e.type === 'TOOL_CALL_RESULT')).toMatchObject({ metadata: { status: 'success' } });
    expect(assistantTexts(late)).toEqual(assistantTexts(a));
  });

  it('a rejected approval: the call is refused and the same run ends cancelled, as its log says', async () => {
    const a = agent();
    say(a, '[[tool:write_file {"path":"ag-ui-refused.txt","content":"no"}]]');
    const asked = recorder();
    await a.runAgent({}, asked.subscriber);
    const interrupt = asked.finished[0]!.interrupts![0]!;
    const answered = recorder();
    await a.runAgent({ resume: [{ interruptId: interrupt.id, status: 'cancelled' }] }, answered.subscriber);
    expect(dataAgentRun(answered.events)).toBe(dataAgentRun(asked.events));
    expect(answered.finished).toEqual([{ outcome: 'cancelled' }]);
    expect((await runEvents(dataAgentRun(asked.events))).filter((e) => e.event_type === 'done')).toEqual([expect.objectContaining({ cancelled: true })]);
    expect(answered.events.find((e) => e.type === 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: interrupt.toolCallId, metadata: { status: 'rejected' } });
    // An interrupt of another thread's run is not found.
    const stranger = agent();
    await expect(stranger.runAgent({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] })).rejects.toMatchObject({ status: 404 });
  });

  it("runs the assistant's own tool: the call, its arguments and its result", async () => {
    const a = agent();
    say(a, '[[tool:ls {"path": "."}]]');
    const run = recorder();
    await a.runAgent({}, run.subscriber);
    expect(types(run.events)).toEqual(expect.arrayContaining(['TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_RESULT']));
    const holder = a.messages.find((m) => m.role === 'assistant' && m.toolCalls?.length);
    expect(holder?.role === 'assistant' && holder.toolCalls![0]).toMatchObject({ type: 'function', function: { name: 'ls', arguments: '{"path":"."}' } });
    const result = a.messages.find((m) => m.role === 'tool');
    expect(result).toMatchObject({ role: 'tool', toolCallId: holder?.role === 'assistant' ? holder.toolCalls![0]!.id : '' });
    expect(run.finished).toEqual([{ outcome: 'success', pendingToolCallIds: [] }]);
  });

  it("completes a client-side tool round trip: the call comes back pending, the client's tool message continues the thread", async () => {
    const tools: Tool[] = [{ name: 'get_weather', description: 'The weather in a city, as the client knows it', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
    const a = agent();
    say(a, '[[tool:get_weather {"city":"Oslo"}]]');
    const first = recorder();
    await a.runAgent({ tools }, first.subscriber);
    const pending = first.finished[0]!.pendingToolCallIds!;
    expect(first.finished).toEqual([{ outcome: 'success', pendingToolCallIds: [expect.any(String)] }]);
    expect(types(first.events)).not.toContain('TOOL_CALL_RESULT');
    const holder = a.messages.find((m) => m.role === 'assistant' && m.toolCalls?.length);
    expect(holder?.role === 'assistant' && holder.toolCalls![0]).toMatchObject({ id: pending[0], function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } });

    // The application runs its tool and hands the result back.
    a.addMessage({ id: randomUUID(), role: 'tool', toolCallId: pending[0]!, content: '{"city":"Oslo","sky":"sunny"}' });
    const second = recorder();
    await a.runAgent({ tools }, second.subscriber);
    expect(second.finished).toEqual([{ outcome: 'success', pendingToolCallIds: [] }]);
    expect(assistantTexts(a).at(-1)).toContain('Tool get_weather returned: {"city":"Oslo","sky":"sunny"}');
    const stored = (await api(system.url, 'GET', `/sessions/${a.threadId}/messages`, { apiKey: TEST_API_KEY })).body.messages as Array<{ role: string }>;
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('answers a bad API key with HTTP 401 and our error body, which HttpAgent surfaces', async () => {
    const a = agent({ apiKey: 'not-a-key' });
    say(a, 'hello');
    await expect(a.runAgent({})).rejects.toMatchObject({ status: 401, payload: { error_code: 'invalid_api_key', message: expect.any(String) } });
  });

  it('answers an unknown assistant with HTTP 404, and runs a named one', async () => {
    const unknown = agent({ path: '/no-such-assistant' });
    say(unknown, 'hello');
    await expect(unknown.runAgent({})).rejects.toMatchObject({ status: 404, payload: { error_code: 'assistant_not_found' } });
    const named = agent({ path: '/default' });
    say(named, 'hello');
    const run = recorder();
    await named.runAgent({}, run.subscriber);
    expect(run.finished).toEqual([{ outcome: 'success', pendingToolCallIds: [] }]);
  });

  it("keeps a thread id each person's own: another person's run on it is a thread of theirs, holding none of this one", async () => {
    const a = agent();
    say(a, 'mine');
    await a.runAgent({});
    const other = agent({ apiKey: OTHER_API_KEY, threadId: a.threadId });
    say(other, 'not yours');
    const theirs = recorder();
    await other.runAgent({}, theirs.subscriber);
    expect(theirs.finished).toEqual([{ outcome: 'success', pendingToolCallIds: [] }]);
    const users = async (apiKey: string) => ((await api(system.url, 'GET', `/sessions/${a.threadId}/messages`, { apiKey })).body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'user').map((m) => m.content);
    expect(await users(TEST_API_KEY)).toEqual(['mine']);
    expect(await users(OTHER_API_KEY)).toEqual(['not yours']);
  });
});
