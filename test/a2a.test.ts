import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Role, TaskState, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, createAuthenticatingFetchWithRetry, type Client } from '@a2a-js/sdk/client';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

/**
 * A2A 1.0, judged by `@a2a-js/sdk`'s own client (ClientFactory over the JSON-RPC transport),
 * built from the gateway's agent card with the API key on every call: a task is a run, its
 * context the session, a dropped stream is not a stop and SubscribeToTask picks it up, and an
 * approval is input-required answered by the next message on the task.
 */
describe('A2A', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await TestSystem.start();
  });
  afterAll(async () => {
    await system?.stop();
  });

  /** A client from the real agent card, sending `apiKey` as X-API-Key through the SDK's authenticating fetch. */
  async function client(apiKey = TEST_API_KEY): Promise<Client> {
    const fetchImpl = createAuthenticatingFetchWithRetry(fetch, { headers: async () => ({ 'X-API-Key': apiKey }), shouldRetryWithHeaders: async () => undefined });
    const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] });
    return new ClientFactory(options).createFromUrl(system.url);
  }
  /** A 0.3 client: the SDK's legacy JSON-RPC transport, chosen by the card's 0.3 interface; `methods` records what it sent. */
  async function legacyClient(methods: string[]): Promise<Client> {
    const authed = createAuthenticatingFetchWithRetry(fetch, { headers: async () => ({ 'X-API-Key': TEST_API_KEY }), shouldRetryWithHeaders: async () => undefined });
    const fetchImpl: typeof fetch = (input, init) => {
      if (typeof init?.body === 'string') methods.push((JSON.parse(init.body) as { method: string }).method);
      return authed(input, init);
    };
    const card = await (await client()).getAgentCard();
    const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })] });
    return new ClientFactory(options).createFromAgentCard({ ...card, supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3') });
  }
  const text = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: '' });
  const data = (value: Record<string, unknown>): Part => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' });
  const message = (parts: Part[], more: Partial<Message> = {}): { tenant: string; message: Message; configuration: undefined; metadata: undefined } => ({
    tenant: '',
    message: { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [], ...more },
    configuration: undefined,
    metadata: undefined,
  });

  /** Reads a stream to its end (or until `stopAfter` says so). */
  async function read(stream: AsyncIterable<StreamResponse>, stopAfter: (seen: StreamResponse[]) => boolean = () => false): Promise<StreamResponse[]> {
    const seen: StreamResponse[] = [];
    for await (const item of stream) {
      seen.push(item);
      if (stopAfter(seen)) break;
    }
    return seen;
  }
  const textOf = (parts: Part[] = []) => parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])).join('');
  /** The answer as a stream builds it: the snapshot's artifact, then each appended chunk. */
  function answerOf(items: StreamResponse[]): string {
    let answer = '';
    for (const { payload } of items) {
      if (payload?.$case === 'task') answer = textOf(payload.value.artifacts[0]?.parts);
      if (payload?.$case === 'artifactUpdate') answer = (payload.value.append ? answer : '') + textOf(payload.value.artifact?.parts);
    }
    return answer;
  }
  const states = (items: StreamResponse[]) => items.flatMap(({ payload }) => (payload?.$case === 'statusUpdate' ? [payload.value.status!.state] : payload?.$case === 'task' ? [payload.value.status!.state] : []));
  const dataParts = (items: StreamResponse[]) =>
    items.flatMap(({ payload }) => (payload?.$case === 'statusUpdate' ? (payload.value.status?.message?.parts ?? []) : [])).flatMap((p) => (p.content?.$case === 'data' ? [p.content.value as Record<string, unknown>] : []));
  const taskOf = (items: StreamResponse[]): Task => {
    const first = items[0]?.payload;
    if (first?.$case !== 'task') throw new Error(`a stream opens with its task, not ${first?.$case}`);
    return first.value;
  };
  const FINAL = [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_FAILED];
  const thirty = Array.from({ length: 30 }, (_, i) => `tok${i} `).join('');

  it('serves an agent card the SDK builds its client from: the assistants as skills, the API key scheme, streaming', async () => {
    const card = await (await client()).getAgentCard();
    expect(card.skills.map((s) => s.id)).toContain('default');
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.securitySchemes.api_key?.scheme).toEqual({ $case: 'apiKeySecurityScheme', value: { location: 'header', name: 'X-API-Key', description: expect.any(String) } });
    expect(card.supportedInterfaces).toEqual(['1.0', '0.3'].map((protocolVersion) => expect.objectContaining({ url: `${system.url}/api/v1/a2a`, protocolBinding: 'JSONRPC', protocolVersion })));
    // Public: discovery needs no key.
    expect((await fetch(`${system.url}/.well-known/agent-card.json`)).status).toBe(200);
  });

  it('streams an answer (a Task, then updates, ending completed) and answers SendMessage and GetTask with the same text', async () => {
    const a2a = await client();
    const items = await read(a2a.sendMessageStream(message([text('hello there')])));
    const task = taskOf(items);
    expect(task.id).toMatch(/[0-9a-f-]{36}/);
    expect(states(items).at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(states(items).filter((s) => FINAL.includes(s))).toHaveLength(1);
    const answer = answerOf(items);
    expect(answer.length).toBeGreaterThan(0);
    const got = await a2a.getTask({ tenant: '', id: task.id });
    expect(got).toMatchObject({ id: task.id, contextId: task.contextId, status: { state: TaskState.TASK_STATE_COMPLETED } });
    expect(textOf(got.artifacts[0].parts)).toBe(answer);

    // Blocking: the task comes back ended; the same context continues the conversation (a new task).
    const blocking = (await a2a.sendMessage(message([text('and again')], { contextId: task.contextId }))) as Task;
    expect(blocking).toMatchObject({ contextId: task.contextId, status: { state: TaskState.TASK_STATE_COMPLETED } });
    expect(blocking.id).not.toBe(task.id);
    expect(textOf(blocking.artifacts[0].parts).length).toBeGreaterThan(0);
  });

  it('a dropped stream is not a stop: SubscribeToTask opens with the task as it stands and continues, no gap, no duplicate', async () => {
    const a2a = await client();
    const abort = new AbortController();
    const before = await read(a2a.sendMessageStream(message([text('[[slow:60]] [[chunks:30]]')]), { signal: abort.signal }), (seen) => seen.filter((i) => i.payload?.$case === 'artifactUpdate').length >= 3);
    abort.abort();
    const cut = answerOf(before);
    expect(cut).toMatch(/^tok0 tok1 tok2 /);
    const task = taskOf(before);

    const resumed = await read(a2a.resubscribeTask({ tenant: '', id: task.id }));
    const snapshot = taskOf(resumed);
    expect(snapshot.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    // The snapshot holds everything up to now, and the stream the rest.
    expect(textOf(snapshot.artifacts[0].parts).startsWith(cut)).toBe(true);
    expect(resumed.filter((i) => i.payload?.$case === 'artifactUpdate').length).toBeGreaterThan(0);
    expect(answerOf(resumed)).toBe(thirty);
    expect(states(resumed).at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    // An ended task resubscribes to its final snapshot alone.
    const again = await read(a2a.resubscribeTask({ tenant: '', id: task.id }));
    expect(again).toHaveLength(1);
    expect(answerOf(again)).toBe(thirty);
  });

  it('CancelTask stops the run: the stream ends canceled, the run has one done (cancelled), and a second cancel is refused', async () => {
    const a2a = await client();
    const stream = a2a.sendMessageStream(message([text('[[slow:100]] [[chunks:100]]')]));
    const seen: StreamResponse[] = [];
    let cancelled: Task | undefined;
    for await (const item of stream) {
      seen.push(item);
      if (!cancelled && item.payload?.$case === 'artifactUpdate') cancelled = await a2a.cancelTask({ tenant: '', id: taskOf(seen).id, metadata: undefined });
    }
    expect(cancelled?.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(states(seen).filter((s) => FINAL.includes(s))).toEqual([TaskState.TASK_STATE_CANCELED]);
    expect(answerOf(seen).length).toBeLessThan(100 * 'tok99 '.length);
    const id = taskOf(seen).id;
    const log = await (await fetch(`${system.url}/api/v1/runs/${id}/events`, { headers: { 'x-api-key': TEST_API_KEY } })).text();
    const dones = log.split('\n').filter((line) => line === 'event: done');
    expect(dones).toHaveLength(1);
    expect(log).toContain('"cancelled":true');
    await expect(a2a.cancelTask({ tenant: '', id, metadata: undefined })).rejects.toMatchObject({ name: 'TaskNotCancelableError' });
  });

  it('an approval is input-required with the question; the next message on the task approves it and the same run goes on', async () => {
    const a2a = await client();
    const path = `a2a-${randomUUID().slice(0, 8)}.txt`;
    const asked = await read(a2a.sendMessageStream(message([text(`[[tool:write_file {"path":"${path}","content":"hi"}]]`)])));
    const task = taskOf(asked);
    expect(states(asked).at(-1)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const question = asked.at(-1)!.payload;
    expect(question?.$case).toBe('statusUpdate');
    const parts = question?.$case === 'statusUpdate' ? (question.value.status?.message?.parts ?? []) : [];
    expect(textOf(parts)).toContain('Approve write_file');
    expect(dataParts(asked).at(-1)).toMatchObject({ type: 'approval_request', action_request: { name: 'write_file', args: { path } } });
    const file = join(system.dataDir, 'workspaces', 'acme', 'alice', path);
    expect(existsSync(file)).toBe(false);
    expect((await a2a.getTask({ tenant: '', id: task.id })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    const answered = await read(a2a.sendMessageStream(message([text('approve')], { taskId: task.id, contextId: task.contextId })));
    expect(taskOf(answered)).toMatchObject({ id: task.id, status: { state: TaskState.TASK_STATE_WORKING } });
    expect(dataParts(answered)).toContainEqual(expect.objectContaining({ type: 'tool_result', status: 'success' }));
    expect(states(answered).at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(readFileSync(file, 'utf8')).toBe('hi');

    // Blocking, with a data part: rejecting ends the task canceled, and the tool never runs.
    const other = `a2a-${randomUUID().slice(0, 8)}.txt`;
    const waiting = (await a2a.sendMessage(message([text(`[[tool:write_file {"path":"${other}","content":"no"}]]`)]))) as Task;
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const rejected = (await a2a.sendMessage(message([data({ decision: 'reject' })], { taskId: waiting.id }))) as Task;
    expect(rejected).toMatchObject({ id: waiting.id, status: { state: TaskState.TASK_STATE_CANCELED } });
    expect(existsSync(join(system.dataDir, 'workspaces', 'acme', 'alice', other))).toBe(false);
    // An ended task takes no more answers.
    await expect(a2a.sendMessage(message([text('approve')], { taskId: waiting.id }))).rejects.toMatchObject({ name: 'UnsupportedOperationError', message: expect.stringContaining('has ended') });
  });

  it("shows the assistant's own tool call and its result as data parts of working status messages", async () => {
    const items = await read((await client()).sendMessageStream(message([text('[[tool:ls {"path": "."}]]')])));
    const parts = dataParts(items);
    const call = parts.find((p) => p.type === 'tool_call');
    expect(call).toMatchObject({ tool_name: 'ls', tool_args: { path: '.' } });
    expect(parts).toContainEqual(expect.objectContaining({ type: 'tool_result', tool_call_id: call?.tool_call_id, status: 'success' }));
    expect(states(items).at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('a bad key is a clear error (HTTP 401), and an unknown assistant a JSON-RPC invalid params naming it', async () => {
    const bad = await client('not-a-key');
    await expect(bad.sendMessage(message([text('hi')]))).rejects.toMatchObject({ message: 'The API key is not valid', data: { error_code: 'invalid_api_key' } });
    const raw = await fetch(`${system.url}/api/v1/a2a`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'not-a-key' }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'x' } }) });
    expect(raw.status).toBe(401);
    expect(await raw.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32000, data: { error_code: 'invalid_api_key' } } });

    // A method that is not A2A's gets JSON-RPC's own error.
    const post = (body: string) => fetch(`${system.url}/api/v1/a2a`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_API_KEY }, body });
    expect(await (await post(JSON.stringify({ jsonrpc: '2.0', id: 'x', method: 'tasks/explode', params: {} }))).json()).toMatchObject({ id: 'x', error: { code: -32601 } });

    const a2a = await client();
    await expect(a2a.sendMessage(message([text('hi')], { metadata: { assistant_id: 'no-such-assistant' } }))).rejects.toMatchObject({
      name: 'RequestMalformedError',
      message: expect.stringContaining('no-such-assistant'),
    });
    await expect(read(a2a.sendMessageStream(message([text('hi')], { metadata: { assistant_id: 'no-such-assistant' } })))).rejects.toMatchObject({ name: 'RequestMalformedError' });
    // The skill the card names is accepted.
    const named = (await a2a.sendMessage(message([text('hi')], { metadata: { assistant_id: 'default' } }))) as Task;
    expect(named.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("refuses another person's task as not found, whatever the method, and keeps their context theirs", async () => {
    const mine = (await (await client()).sendMessage(message([text('mine')]))) as Task;
    const bob = await client(OTHER_API_KEY);
    const notFound = { name: 'TaskNotFoundError' };
    await expect(bob.getTask({ tenant: '', id: mine.id })).rejects.toMatchObject(notFound);
    await expect(bob.cancelTask({ tenant: '', id: mine.id, metadata: undefined })).rejects.toMatchObject(notFound);
    await expect(read(bob.resubscribeTask({ tenant: '', id: mine.id }))).rejects.toMatchObject(notFound);
    await expect(bob.sendMessage(message([text('approve')], { taskId: mine.id }))).rejects.toMatchObject(notFound);
    // Naming another person's context starts a conversation of the caller's own under that name.
    const theirs = (await bob.sendMessage(message([text('in your context')], { contextId: mine.contextId }))) as Task;
    expect(theirs).toMatchObject({ contextId: mine.contextId, status: { state: TaskState.TASK_STATE_COMPLETED } });
    expect(theirs.id).not.toBe(mine.id);
    const history = async (apiKey: string) => ((await (await fetch(`${system.url}/api/v1/sessions/${mine.contextId}/messages`, { headers: { 'x-api-key': apiKey } })).json()) as { messages: Array<{ role: string; content: string }> }).messages.filter((m) => m.role === 'user').map((m) => m.content);
    expect(await history(TEST_API_KEY)).toEqual(['mine']);
    expect(await history(OTHER_API_KEY)).toEqual(['in your context']);
    await expect(bob.getTask({ tenant: '', id: randomUUID() })).rejects.toMatchObject(notFound);
  });

  it("serves the same calls to a 0.3 client under 0.3's names: stream, resubscribe, approval, get and cancel", async () => {
    const methods: string[] = [];
    const a2a = await legacyClient(methods);
    const abort = new AbortController();
    const before = await read(a2a.sendMessageStream(message([text('[[slow:40]] [[chunks:20]]')]), { signal: abort.signal }), (seen) => seen.filter((i) => i.payload?.$case === 'artifactUpdate').length >= 2);
    abort.abort();
    const resumed = await read(a2a.resubscribeTask({ tenant: '', id: taskOf(before).id }));
    expect(answerOf(resumed)).toBe(Array.from({ length: 20 }, (_, i) => `tok${i} `).join(''));
    expect(states(resumed).at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);

    const path = `a2a-${randomUUID().slice(0, 8)}.txt`;
    const waiting = await read(a2a.sendMessageStream(message([text(`[[tool:write_file {"path":"${path}","content":"v03"}]]`)])));
    expect(states(waiting).at(-1)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const approved = (await a2a.sendMessage(message([text('approve')], { taskId: taskOf(waiting).id }))) as Task;
    expect(approved.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(readFileSync(join(system.dataDir, 'workspaces', 'acme', 'alice', path), 'utf8')).toBe('v03');
    expect((await a2a.getTask({ tenant: '', id: approved.id })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

    const long: StreamResponse[] = [];
    for await (const item of a2a.sendMessageStream(message([text('[[slow:100]] [[chunks:100]]')]))) {
      long.push(item);
      if (long.length === 2) expect((await a2a.cancelTask({ tenant: '', id: taskOf(long).id, metadata: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    }
    expect(states(long).filter((s) => FINAL.includes(s))).toEqual([TaskState.TASK_STATE_CANCELED]);
    expect(new Set(methods)).toEqual(new Set(['message/stream', 'tasks/resubscribe', 'message/send', 'tasks/get', 'tasks/cancel']));
  });
});
