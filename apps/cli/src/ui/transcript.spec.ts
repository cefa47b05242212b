import type { EventDict, EventDictOf, EventType } from '#core/events/execution-event.js';
import { Transcript } from './transcript.js';

const envelope = { timestamp: '2026-01-01T00:00:00.000Z', session_id: 's', run_id: 'r', seq: 0 };
// Only the fields a case needs: the renderer must cope with what it is given.
const ev = <T extends EventType>(fields: Partial<EventDictOf<T>> & { event_type: T }): EventDictOf<T> => ({ ...envelope, ...fields }) as EventDictOf<T>;
const kinds = (t: Transcript) => t.blocks.map((b) => b.kind);

describe('Transcript', () => {
  it('thinks until the first token, streams the answer, and finishes it at the next event', () => {
    const t = new Transcript();
    t.start('question');
    expect(t.phase).toEqual({ kind: 'thinking' });
    t.apply(ev({ event_type: 'text', content: '# Ti' }));
    t.apply(ev({ event_type: 'text', content: 'tle' }));
    expect(t.phase).toEqual({ kind: 'streaming' });
    expect(t.streaming).toBe('# Title');
    t.apply(ev({ event_type: 'tool_call', tool_name: 'ls', tool_args: {} }));
    expect(t.streaming).toBe('');
    expect(t.phase).toEqual({ kind: 'tool', name: 'ls' });
    expect(t.blocks[1]).toMatchObject({ kind: 'answer', markdown: '# Title' });
    t.apply(ev({ event_type: 'tool_result', status: 'success', result: {} }));
    expect(t.phase).toEqual({ kind: 'thinking' });
    t.apply(ev({ event_type: 'done', cancelled: false }));
    expect(kinds(t)).toEqual(['user', 'answer', 'tool']);
    expect(t.phase).toEqual({ kind: 'idle' });
  });

  it('keeps file changes, todos, errors and a cancelled end as blocks', () => {
    const t = new Transcript();
    t.apply(ev({ event_type: 'file_operation', operation: 'edit', path: 'f', diff: '+a', stats: { additions: 1, deletions: 0 } }));
    t.apply(ev({ event_type: 'todo_update', todos: [{ content: 'a', status: 'completed' }] }));
    t.apply(ev({ event_type: 'tool_result', status: 'error', result: { error: 'boom' } }));
    t.apply(ev({ event_type: 'error', error: 'model down', recoverable: true }));
    t.apply(ev({ event_type: 'done', cancelled: true, reason: 'rejected' }));
    expect(t.blocks).toEqual([
      { id: 0, kind: 'file', operation: 'edit', path: 'f', diff: '+a', additions: 1, deletions: 0 },
      { id: 1, kind: 'todos', todos: [{ content: 'a', status: 'completed' }] },
      { id: 2, kind: 'tool_failed', status: 'error', detail: 'boom' },
      { id: 3, kind: 'error', message: 'model down', recoverable: true },
      { id: 4, kind: 'cancelled', reason: 'rejected' },
    ]);
  });

  it('an approval request stops the spinner; the answer shows and the run goes on or ends', () => {
    const t = new Transcript();
    t.apply(ev({ event_type: 'hitl_request', request_id: 'q', action_request: { name: 'write_file', args: {} } }));
    expect(t.phase).toEqual({ kind: 'approval' });
    t.answered('write_file', 'approve');
    expect(t.phase).toEqual({ kind: 'tool', name: 'write_file' });
    t.answered('write_file', 'reject');
    expect(t.phase).toEqual({ kind: 'idle' });
  });
});
