import { TodoUpdateEvent, type ExecutionEvent } from '../../events/execution-event.js';
import type { ToolContext } from '../tool.js';
import { createWriteTodosTool } from './write-todos.tool.js';

describe('write_todos tool', () => {
  it('emits the whole list as a todo_update event and confirms', async () => {
    const events: ExecutionEvent[] = [];
    const ctx: ToolContext = {
      caller: { tenantId: 't', userId: 'u', role: 'user' },
      sessionId: 's1',
      runId: 'r1',
      toolCallId: 'c1',
      signal: new AbortController().signal,
      emit: (build) => events.push(build({ sessionId: 's1', runId: 'r1' })),
    };
    const todos = [
      { content: 'Load the CSV', status: 'completed' },
      { content: 'Compute totals', status: 'in_progress' },
      { content: 'Write the report', status: 'pending' },
    ];
    const result = await createWriteTodosTool().execute({ todos }, ctx);
    expect(result).toEqual({ success: true, output: 'Todo list updated: 3 items (1 completed, 1 in progress, 1 pending).' });
    expect(events).toHaveLength(1);
    expect(events[0]).toBeInstanceOf(TodoUpdateEvent);
    expect(events[0]!.toDict()).toMatchObject({ event_type: 'todo_update', session_id: 's1', run_id: 'r1', todos });
  });
});
