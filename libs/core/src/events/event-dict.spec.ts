import {
  DoneEvent,
  ElicitationEvent,
  ElicitationRequestEvent,
  ErrorEvent,
  EVENT_TYPES,
  ExecutionEvent,
  FileOperationEvent,
  HitlRequestEvent,
  RunQueuedEvent,
  RunStartedEvent,
  TextEvent,
  TodoUpdateEvent,
  UsageEvent,
  ToolCallEvent,
  ToolResultEvent,
  type EventDict,
  type EventDictOf,
  type EventType,
  type TextEventDict,
} from './execution-event.js';

/**
 * The wire form of each event type, field by field and in order. A field renamed in an event's
 * dict interface fails the typecheck here (`satisfies`); one renamed or reordered in its class's
 * toDict() fails the round trip below. Clients in other languages read exactly this.
 */
const envelope = { timestamp: '2026-01-01T00:00:00.000Z', session_id: 's1', run_id: 'r1', seq: 7 };
const wire = {
  run_queued: { event_type: 'run_queued', ...envelope },
  run_started: { event_type: 'run_started', ...envelope, worker_id: 'w1' },
  text: { event_type: 'text', ...envelope, content: 'hello', is_final: true },
  tool_call: { event_type: 'tool_call', ...envelope, tool_name: 'ls', tool_args: { path: '.' }, tool_call_id: 'c1', client: true },
  tool_result: { event_type: 'tool_result', ...envelope, tool_call_id: 'c1', result: { files: [] }, status: 'success', content: [{ type: 'text', text: 'a' }] },
  hitl_request: {
    event_type: 'hitl_request',
    ...envelope,
    request_id: 'h1',
    action_request: { name: 'shell', args: { cmd: 'ls' }, description: 'run' },
    allowed_decisions: ['approve', 'reject'],
    expires_at: '2026-01-01T00:01:00.000Z',
  },
  elicitation_request: {
    event_type: 'elicitation_request',
    ...envelope,
    request_id: 'e1',
    tool_call_id: 'c1',
    server: 'booking',
    mode: 'form',
    message: 'Who is coming?',
    requested_schema: { type: 'object', properties: { guests: { type: 'integer', default: 2 } } },
    allowed_actions: ['accept', 'decline', 'cancel'],
    expires_at: '2026-01-01T00:05:00.000Z',
  },
  elicitation: { event_type: 'elicitation', ...envelope, request_id: 'e1', action: 'accept', content: { guests: 2 } },
  todo_update: { event_type: 'todo_update', ...envelope, todos: [{ content: 'a', status: 'in_progress' }] },
  file_operation: { event_type: 'file_operation', ...envelope, operation: 'write', path: 'a.txt', diff: '+x', stats: { additions: 1, deletions: 0 } },
  usage: {
    event_type: 'usage',
    ...envelope,
    model: 'openai:gpt-4o',
    call: 2,
    input_tokens: 1200,
    output_tokens: 80,
    cached_input_tokens: 1024,
    estimated: true,
    cost: '0.002280000000',
    currency: 'USD',
    priced: false,
  },
  error: { event_type: 'error', ...envelope, error: 'busy', recoverable: true, error_code: 'llm_overloaded', resume_after_seq: 3, retry_after: 7 },
  done: { event_type: 'done', ...envelope, cancelled: true, reason: 'user', usage: { input_tokens: 12, output_tokens: 3, estimated: true } },
} satisfies { [T in EventType]: EventDictOf<T> };

/** The same events built by their classes: toDict() must give exactly `wire`. */
const env = { sessionId: 's1', runId: 'r1', seq: 7, timestamp: envelope.timestamp };
const built: { [T in EventType]: ExecutionEvent<EventDictOf<T>> } = {
  run_queued: new RunQueuedEvent(env),
  run_started: new RunStartedEvent(env, 'w1'),
  text: new TextEvent(env, 'hello', true),
  tool_call: new ToolCallEvent(env, 'ls', { path: '.' }, 'c1', true),
  tool_result: new ToolResultEvent(env, 'c1', { files: [] }, 'success', [{ type: 'text', text: 'a' }]),
  hitl_request: new HitlRequestEvent(env, 'h1', { name: 'shell', args: { cmd: 'ls' }, description: 'run' }, ['approve', 'reject'], '2026-01-01T00:01:00.000Z'),
  elicitation_request: new ElicitationRequestEvent(
    env,
    'e1',
    'c1',
    { server: 'booking', mode: 'form', message: 'Who is coming?', requestedSchema: { type: 'object', properties: { guests: { type: 'integer', default: 2 } } } },
    '2026-01-01T00:05:00.000Z',
  ),
  elicitation: new ElicitationEvent(env, 'e1', 'accept', { guests: 2 }),
  todo_update: new TodoUpdateEvent(env, [{ content: 'a', status: 'in_progress' }]),
  file_operation: new FileOperationEvent(env, 'write', 'a.txt', '+x', { additions: 1, deletions: 0 }),
  usage: new UsageEvent(env, { model: 'openai:gpt-4o', call: 2, inputTokens: 1200, outputTokens: 80, cachedInputTokens: 1024, estimated: true, cost: '0.002280000000', currency: 'USD', priced: false }),
  error: new ErrorEvent(env, 'busy', true, 'llm_overloaded', 3, 7),
  done: new DoneEvent(env, true, 'user', { input_tokens: 12, output_tokens: 3, estimated: true }),
};

// Every member of the union is one of EVENT_TYPES and back: a type added to one and not the other fails here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const unionMatchesEventTypes: Same<EventDict['event_type'], (typeof EVENT_TYPES)[number]> = true;
// Narrowing on event_type reaches the type's own fields, with no cast.
const contentOf = (event: EventDict): string | undefined => (event.event_type === 'text' ? event.content : undefined);
// A class's toDict() is its own dict type.
const textDict: TextEventDict = new TextEvent(env, 'x').toDict();

describe('the wire form of each event type', () => {
  it('covers every event type', () => {
    expect(Object.keys(wire).sort()).toEqual([...EVENT_TYPES].sort());
    expect(unionMatchesEventTypes).toBe(true);
    expect(contentOf(textDict)).toBe('x');
  });

  it.each(EVENT_TYPES.map((type) => [type]))('%s: toDict() writes exactly its fields, in order', (type) => {
    expect(JSON.stringify(built[type].toDict())).toBe(JSON.stringify(wire[type]));
  });

  it.each(EVENT_TYPES.map((type) => [type]))('%s: fromDict() reads every field of its JSON back', (type) => {
    const json = JSON.stringify(wire[type]);
    const event = ExecutionEvent.fromDict(JSON.parse(json) as Record<string, unknown>);
    expect(event.eventType).toBe(type);
    expect(JSON.stringify(event.toDict())).toBe(json);
  });

  it('leaves optional fields out rather than writing them empty', () => {
    const bare = { ...envelope };
    expect(Object.keys(new ErrorEvent(env, 'boom').toDict())).toEqual(['event_type', ...Object.keys(bare), 'error', 'recoverable']);
    expect(Object.keys(new DoneEvent(env).toDict())).toEqual(['event_type', ...Object.keys(bare), 'cancelled']);
    expect(Object.keys(new ToolResultEvent(env, 'c1', 'ok', 'success').toDict())).toEqual(['event_type', ...Object.keys(bare), 'tool_call_id', 'result', 'status']);
    expect(Object.keys(new HitlRequestEvent(env, 'h1', { name: 'x', args: {} }).toDict())).toEqual(['event_type', ...Object.keys(bare), 'request_id', 'action_request', 'allowed_decisions']);
    // A URL-mode question has no schema; an ending nobody answered has no content, and says why.
    expect(Object.keys(new ElicitationRequestEvent(env, 'e1', 'c1', { server: 's', mode: 'url', message: 'Sign the form', url: 'https://example.com/x' }, '2026-01-01T00:05:00.000Z').toDict())).toEqual(['event_type', ...Object.keys(bare), 'request_id', 'tool_call_id', 'server', 'mode', 'message', 'url', 'allowed_actions', 'expires_at']);
    expect(new ElicitationEvent(env, 'e1', 'cancel', undefined, 'expired').toDict()).toEqual({ event_type: 'elicitation', ...bare, request_id: 'e1', action: 'cancel', reason: 'expired' });
  });

  it('types fromDict by the dict it is given', () => {
    const done: DoneEvent = ExecutionEvent.fromDict<'done'>(wire.done);
    expect(done.cancelled).toBe(true);
  });
});
