import { TodoUpdateEvent, type TodoItem } from '../../events/execution-event.js';
import type { Tool } from '../tool.js';

const STATUSES = ['pending', 'in_progress', 'completed'] as const;

/**
 * The `write_todos` tool: the model replaces the run's todo list with the one it sends; the
 * list goes out as a `todo_update` event so clients can show progress.
 */
export function createWriteTodosTool(): Tool {
  return {
    name: 'write_todos',
    idempotent: true,
    description:
      'Write your plan as a todo list for multi-step tasks. Send the complete list every time (it replaces the previous one); mark one item in_progress while you work on it and completed when done.',
    parameters: {
      type: 'object',
      properties: {
        todos: {
          type: 'array',
          maxItems: 100,
          items: {
            type: 'object',
            properties: { content: { type: 'string', minLength: 1, maxLength: 1000 }, status: { type: 'string', enum: [...STATUSES] } },
            required: ['content', 'status'],
            additionalProperties: false,
          },
        },
      },
      required: ['todos'],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const todos: TodoItem[] = (args.todos as TodoItem[]).map((t) => ({ content: t.content, status: t.status }));
      ctx.emit((envelope) => new TodoUpdateEvent(envelope, todos));
      const count = (s: TodoItem['status']) => todos.filter((t) => t.status === s).length;
      return {
        success: true,
        output: `Todo list updated: ${todos.length} item${todos.length === 1 ? '' : 's'} (${count('completed')} completed, ${count('in_progress')} in progress, ${count('pending')} pending).`,
      };
    },
  };
}
