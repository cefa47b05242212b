import { styleText } from 'node:util';
import type { EventDict } from '#core/events/execution-event.js';

export interface Output {
  write(text: string): unknown;
}

/** What the renderer needs of the terminal: where answers and notices go, and whether to colour them. */
export interface RenderTarget {
  out: Output;
  err: Output;
  /** ANSI styles only for a terminal (stdout a TTY, NO_COLOR unset). */
  color: boolean;
}

/** Longest argument text shown on a tool line. */
const ARGS_SHOWN = 120;

/**
 * Prints a run's events for `-p`: the answer's markdown as the model wrote it, a line per tool
 * call, the todo list as a checklist, file changes with their +/- counts; approvals and errors
 * on stderr. The interactive UI (ui/app.ts) shows the same events its own way.
 */
export class PrintRenderer {
  private atLineStart = true;

  constructor(private readonly target: RenderTarget) {}

  render(e: EventDict): void {
    switch (e.event_type) {
      case 'text':
        if (e.content) this.print(e.content);
        return;
      case 'tool_call':
        this.line(this.style('cyan', `⚙ ${e.tool_name} ${shortArgs(e.tool_args)}`));
        return;
      case 'tool_result':
        if (e.status !== 'success') this.line(this.style('yellow', `  ↳ ${e.status}: ${describe(e.result)}`));
        return;
      case 'todo_update':
        for (const todo of e.todos) {
          this.line(`  ${todo.status === 'completed' ? '[x]' : todo.status === 'in_progress' ? '[~]' : '[ ]'} ${todo.content}`);
        }
        return;
      case 'file_operation':
        this.line(`  ${e.operation} ${e.path} ${this.style('green', `+${e.stats.additions}`)} ${this.style('red', `-${e.stats.deletions}`)}`);
        return;
      case 'hitl_request':
        this.notice(`approval requested: ${e.action_request.name} ${shortArgs(e.action_request.args)}`);
        return;
      case 'elicitation_request':
        this.notice(`${e.server} asks: ${e.message}${e.url ? ` (${e.url})` : ''}`);
        return;
      case 'elicitation':
        this.notice(`answered ${e.action}${e.reason ? ` (${e.reason})` : ''}`);
        return;
      case 'error':
        this.notice(`error: ${e.error}${e.recoverable ? ' (recoverable: try again)' : ''}`);
        return;
      case 'done':
        if (!this.atLineStart) this.print('\n');
        if (e.cancelled) this.notice(`run cancelled${e.reason && e.reason !== 'cancelled' ? ` (${e.reason})` : ''}`);
        return;
      default:
        return;
    }
  }

  private print(text: string): void {
    this.target.out.write(text);
    this.atLineStart = text.endsWith('\n');
  }

  private line(text: string): void {
    this.print(`${this.atLineStart ? '' : '\n'}${text}\n`);
  }

  private notice(text: string): void {
    this.target.err.write(`dataagent: ${text}\n`);
  }

  private style(format: Parameters<typeof styleText>[0], text: string): string {
    // The target decided whether this is a terminal; styleText would look at process.stdout itself.
    return this.target.color ? styleText(format, text, { validateStream: false }) : text;
  }
}

/** A call's arguments on one line, cut to {@link ARGS_SHOWN} characters. */
export function shortArgs(args: unknown): string {
  const text = JSON.stringify(args ?? {});
  return text.length > ARGS_SHOWN ? `${text.slice(0, ARGS_SHOWN - 1)}…` : text;
}

function describe(result: unknown): string {
  const error = (result as { error?: unknown } | null)?.error;
  return typeof error === 'string' ? error : shortArgs(result);
}
