import { DoneEvent, ExecutionEvent, FileOperationEvent, HitlRequestEvent, InvalidEventError, TextEvent, ToolCallEvent, ToolResultEvent, TodoUpdateEvent, ErrorEvent, RunQueuedEvent, RunStartedEvent } from './execution-event.js';

const env = { sessionId: 's1', runId: 'r1', seq: 7, timestamp: '2026-01-01T00:00:00.000Z' };

describe('ExecutionEvent', () => {
  const events: ExecutionEvent[] = [
    new RunQueuedEvent(env),
    new RunStartedEvent(env, 'w1'),
    new TextEvent(env, 'hello', true),
    new ToolCallEvent(env, 'ls', { path: '.' }, 'c1'),
    new ToolResultEvent(env, 'c1', { files: [] }, 'success'),
    new HitlRequestEvent(env, 'h1', { name: 'shell', args: { cmd: 'ls' }, description: 'run' }),
    new TodoUpdateEvent(env, [{ content: 'a', status: 'pending' }]),
    new FileOperationEvent(env, 'write', 'a.txt', '+x', { additions: 1, deletions: 0 }),
    new ErrorEvent(env, 'boom', true),
    new ErrorEvent(env, 'LLM overloaded', true, 'llm_overloaded', undefined, 7),
    new DoneEvent(env, true),
  ];

  it.each(events.map((e) => [e.eventType, e]))('%s round-trips through its dict', (_type, event) => {
    const dict = event.toDict();
    expect(dict).toMatchObject({ event_type: event.eventType, session_id: 's1', run_id: 'r1', seq: 7, timestamp: env.timestamp });
    const rebuilt = ExecutionEvent.fromDict(JSON.parse(JSON.stringify(dict)));
    expect(rebuilt).toBeInstanceOf(event.constructor);
    expect(rebuilt.toDict()).toEqual(dict);
  });

  it('uses snake_case payload fields on the wire', () => {
    expect(new ToolCallEvent(env, 'ls', {}, 'c1').toDict()).toMatchObject({ tool_name: 'ls', tool_args: {}, tool_call_id: 'c1' });
    expect(new TextEvent(env, 'x').toDict()).toMatchObject({ content: 'x', is_final: false });
  });

  it('refuses unknown types and missing envelopes', () => {
    expect(() => ExecutionEvent.fromDict({ event_type: 'nope', session_id: 's', run_id: 'r' })).toThrow(InvalidEventError);
    expect(() => ExecutionEvent.fromDict({ event_type: 'text', run_id: 'r' })).toThrow(/session_id/);
  });
});
