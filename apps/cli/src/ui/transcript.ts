import type { EventDict } from '#core/events/execution-event.js';

export interface TodoView {
  content: string;
  status: string;
}

/** One finished piece of the conversation on screen. */
export type Block =
  | { kind: 'user'; text: string }
  | { kind: 'answer'; markdown: string }
  | { kind: 'tool'; name: string; args: unknown }
  | { kind: 'tool_failed'; status: string; detail: string }
  | { kind: 'file'; operation: string; path: string; diff: string; additions: number; deletions: number }
  | { kind: 'todos'; todos: TodoView[] }
  | { kind: 'approval'; name: string; answer: string }
  | { kind: 'error'; message: string; recoverable: boolean }
  | { kind: 'cancelled'; reason: string }
  | { kind: 'notice'; text: string; tone: 'info' | 'warn' };

/** A block with the number that keys it in ink's `<Static>`. */
export type NumberedBlock = Block & { id: number };

/** What the agent is doing now: the spinner shows for `thinking` and `tool`. */
export type Phase = { kind: 'idle' } | { kind: 'thinking' } | { kind: 'tool'; name: string } | { kind: 'streaming' } | { kind: 'approval' };

/**
 * The conversation as the screen shows it, built from a run's events: finished blocks, the
 * answer still streaming (its markdown re-rendered as it grows) and the phase for the spinner.
 */
export class Transcript {
  blocks: NumberedBlock[] = [];
  /** The answer's markdown so far, while text deltas arrive. */
  streaming = '';
  phase: Phase = { kind: 'idle' };
  private nextId = 0;
  /** The server of each elicitation asked, by request id, for its outcome's line. */
  private readonly asked = new Map<string, string>();

  add(block: Block): void {
    this.blocks = [...this.blocks, { ...block, id: this.nextId++ }];
  }

  /** A question was sent: it shows, and the agent thinks until its first token. */
  start(question: string): void {
    this.add({ kind: 'user', text: question });
    this.phase = { kind: 'thinking' };
  }

  apply(e: EventDict): void {
    if (e.event_type !== 'text') this.flushAnswer();
    switch (e.event_type) {
      case 'text':
        if (!e.content) return;
        this.streaming += e.content;
        this.phase = { kind: 'streaming' };
        return;
      case 'tool_call':
        this.add({ kind: 'tool', name: e.tool_name, args: e.tool_args });
        this.phase = { kind: 'tool', name: e.tool_name };
        return;
      case 'tool_result':
        if (e.status !== 'success' && e.status !== 'rejected' && e.status !== 'cancelled') this.add({ kind: 'tool_failed', status: e.status, detail: failure(e.result) });
        this.phase = { kind: 'thinking' };
        return;
      case 'todo_update':
        this.add({ kind: 'todos', todos: e.todos.map(({ content, status }) => ({ content, status })) });
        return;
      case 'file_operation':
        this.add({ kind: 'file', operation: e.operation, path: e.path, diff: e.diff, additions: e.stats.additions, deletions: e.stats.deletions });
        return;
      case 'hitl_request':
        this.phase = { kind: 'approval' };
        return;
      case 'elicitation_request':
        this.asked.set(e.request_id, e.server);
        this.phase = { kind: 'approval' };
        return;
      case 'elicitation': {
        const content = e.content ? ` ${Object.entries(e.content).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`).join(' · ')}` : '';
        const why = e.reason === 'expired' ? ' (no answer in time)' : e.reason === 'cancelled' ? ' (the call ended)' : '';
        this.add({ kind: 'notice', text: `${this.asked.get(e.request_id) ?? 'the server'} asked: ${e.action}${why}${content}`, tone: e.reason ? 'warn' : 'info' });
        this.phase = { kind: 'thinking' };
        return;
      }
      case 'error':
        this.add({ kind: 'error', message: e.error, recoverable: e.recoverable });
        return;
      case 'done':
        if (e.cancelled) this.add({ kind: 'cancelled', reason: e.reason ?? 'cancelled' });
        this.phase = { kind: 'idle' };
        return;
      default:
        return;
    }
  }

  /** The run ended without its `done` (the connection dropped, the backend threw). */
  abort(message: string): void {
    this.flushAnswer();
    this.add({ kind: 'error', message, recoverable: true });
    this.phase = { kind: 'idle' };
  }

  /** An answered approval request: the run goes on thinking, or ends if rejected. */
  answered(name: string, answer: string): void {
    this.add({ kind: 'approval', name, answer });
    this.phase = answer === 'reject' ? { kind: 'idle' } : { kind: 'tool', name };
  }

  /** Forgets everything on screen (`/clear`, `/new`). */
  clear(): void {
    this.blocks = [];
    this.streaming = '';
  }

  private flushAnswer(): void {
    if (!this.streaming) return;
    this.add({ kind: 'answer', markdown: this.streaming });
    this.streaming = '';
  }
}

function failure(result: unknown): string {
  const error = (result as { error?: unknown } | null)?.error;
  return typeof error === 'string' ? error : JSON.stringify(result ?? null);
}
