import type { EventDict, EventDictOf, EventType } from '#core/events/execution-event.js';
import { PrintRenderer, shortArgs } from './print-renderer.js';

const envelope = { timestamp: '2026-01-01T00:00:00.000Z', session_id: 's', run_id: 'r', seq: 0 };
// Only the fields a case needs: the renderer must cope with what it is given.
const ev = <T extends EventType>(fields: Partial<EventDictOf<T>> & { event_type: T }): EventDictOf<T> => ({ ...envelope, ...fields }) as EventDictOf<T>;

function render(events: EventDict[], color = false): { out: string; err: string } {
  let out = '';
  let err = '';
  const renderer = new PrintRenderer({ out: { write: (t: string) => (out += t) }, err: { write: (t: string) => (err += t) }, color });
  for (const e of events) renderer.render(e);
  return { out, err };
}

describe('PrintRenderer', () => {
  it('streams text as written and ends the answer with a newline', () => {
    const { out } = render([ev({ event_type: 'text', content: '# Title\n\nsome ' }), ev({ event_type: 'text', content: '`code`' }), ev({ event_type: 'done', cancelled: false })]);
    expect(out).toBe('# Title\n\nsome `code`\n');
  });

  it('puts tool lines on their own line, todos as a checklist, file changes with counts', () => {
    const { out } = render([
      ev({ event_type: 'text', content: 'Let me plan.' }),
      ev({ event_type: 'tool_call', tool_name: 'write_todos', tool_args: { todos: [] } }),
      ev({ event_type: 'todo_update', todos: [{ content: 'a', status: 'completed' }, { content: 'b', status: 'in_progress' }, { content: 'c', status: 'pending' }] }),
      ev({ event_type: 'file_operation', operation: 'edit', path: 'files/x.csv', diff: '', stats: { additions: 2, deletions: 1 } }),
    ]);
    expect(out).toBe('Let me plan.\n⚙ write_todos {"todos":[]}\n  [x] a\n  [~] b\n  [ ] c\n  edit files/x.csv +2 -1\n');
  });

  it('writes no ANSI codes unless told the output is a terminal', () => {
    const call = ev({ event_type: 'tool_call', tool_name: 'ls', tool_args: {} });
    expect(render([call]).out).not.toContain('\u001b[');
    expect(render([call], true).out).toContain('\u001b[');
  });

  it('sends approvals, errors and a cancelled end to stderr', () => {
    const { out, err } = render([
      ev({ event_type: 'hitl_request', action_request: { name: 'write_file', args: { path: 'a' } } }),
      ev({ event_type: 'error', error: 'model down', recoverable: true }),
      ev({ event_type: 'done', cancelled: true, reason: 'rejected' }),
    ]);
    expect(out).toBe('');
    expect(err).toBe('dataagent: approval requested: write_file {"path":"a"}\ndataagent: error: model down (recoverable: try again)\ndataagent: run cancelled (rejected)\n');
  });

  it('cuts long arguments', () => {
    const text = shortArgs({ sql: 'x'.repeat(500) });
    expect(text).toHaveLength(120);
    expect(text.endsWith('…')).toBe(true);
  });
});
