import type { AgentBackend } from '../agent/agent-backend.js';
import { ELICITATION_ACTIONS, type ElicitationAction } from '#core/events/execution-event.js';
import type { ElicitationAnswer } from '#core/hitl/elicitation.js';
import { APPROVAL_ANSWERS, type ApprovalAnswer, type ApprovalQuestion } from '../hitl/approver.js';
import type { ElicitationQuestion } from '../hitl/elicitor.js';
import { promptFields, readAnswer, type PromptField } from '../hitl/form-prompt.js';
import { LineEditor, type EditorKey } from '../input/line-editor.js';
import { runSlashCommand, type CommandContext } from '../commands/slash-commands.js';
import { SessionUsage } from './session-usage.js';
import { Transcript } from './transcript.js';

/** Two Ctrl-C within this long exit, whatever the first one did. */
const DOUBLE_INTERRUPT_MS = 2_000;

/** An approval request on screen: the call, and which answer the arrow keys point at. */
export interface PendingApproval {
  question: ApprovalQuestion;
  choice: number;
  answer(answer: ApprovalAnswer): void;
}

/**
 * An MCP server's question on screen: first accept, decline or cancel (arrow keys), then, for
 * an accepted form, each field typed in the input line.
 */
export interface PendingElicitation {
  question: ElicitationQuestion;
  fields: PromptField[];
  step: 'choose' | 'field';
  choice: number;
  /** The field being typed (step `field`). */
  field: number;
  content: Record<string, unknown>;
  /** Why the last line did not fit its field. */
  problem?: string;
  answer(answer: ElicitationAnswer): void;
}

/**
 * The state behind the interactive UI, without React: the transcript, the question being typed,
 * the running answer, an approval waiting for a key. Keys come in through {@link press}; views
 * subscribe and re-render when {@link version} moves.
 */
export class InteractiveSession implements CommandContext {
  readonly transcript = new Transcript();
  readonly usage = new SessionUsage();
  readonly editor = new LineEditor();
  pending: PendingApproval | undefined;
  elicitation: PendingElicitation | undefined;
  /** One line under the input: what a key just did ("Ctrl-C again to exit"). */
  hint = '';
  /** Changes whenever something on screen does; `<Static>` is remounted when `clears` does. */
  version = 0;
  clears = 0;
  backend!: AgentBackend;
  /** Wipes the terminal: what `<Static>` printed is in its scrollback, out of ink's reach. */
  clearScreen: () => void = () => undefined;
  readonly exited: Promise<void>;
  private running: AbortController | undefined;
  private lastQuestion: string | undefined;
  private lastInterrupt = 0;
  private readonly listeners = new Set<() => void>();
  private exit!: () => void;

  constructor(readonly mode: 'local' | 'remote') {
    this.exited = new Promise((resolve) => (this.exit = resolve));
    this.notice(`DataAgent (${mode} mode): ask anything · /help for keys and commands`);
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Asks the person at the keyboard (the backends' Approver): resolves once Enter picks an answer. */
  approve = (question: ApprovalQuestion, signal: AbortSignal): Promise<ApprovalAnswer> =>
    new Promise((resolve) => {
      const answer = (choice: ApprovalAnswer) => {
        signal.removeEventListener('abort', cancelled);
        this.pending = undefined;
        this.transcript.answered(question.action.name, choice);
        this.changed();
        resolve(choice);
      };
      const cancelled = () => answer('reject');
      if (signal.aborted) return cancelled();
      signal.addEventListener('abort', cancelled, { once: true });
      this.pending = { question, choice: 0, answer };
      this.changed();
    });

  /** Asks the person what an MCP server wants to know (the backends' Elicitor): resolves once they answered. */
  elicit = (question: ElicitationQuestion, signal: AbortSignal): Promise<ElicitationAnswer> =>
    new Promise((resolve) => {
      const answer = (reply: ElicitationAnswer) => {
        signal.removeEventListener('abort', cancelled);
        if (this.elicitation?.question !== question) return;
        this.elicitation = undefined;
        this.editor.set('');
        this.changed();
        resolve(reply);
      };
      const cancelled = () => answer({ action: 'cancel' });
      if (signal.aborted) return resolve({ action: 'cancel' });
      signal.addEventListener('abort', cancelled, { once: true });
      const fields = question.mode === 'form' ? promptFields(question.schema) : [];
      // Asked again after a refusal: straight to the fields, the first refused one first.
      const refused = fields.findIndex((f) => question.problems?.[f.name]);
      this.elicitation = { question, fields, step: refused >= 0 ? 'field' : 'choose', choice: 0, field: Math.max(0, refused), content: {}, answer };
      if (refused >= 0) this.elicitation.problem = question.problems![fields[refused]!.name]!.join(', ');
      this.changed();
    });

  /** A line for the person (MCP warnings, the offline model's hint), shown in the transcript. */
  notice = (text: string, tone: 'info' | 'warn' = 'info'): void => {
    this.transcript.add({ kind: 'notice', text, tone });
    this.changed();
  };

  /** One key press, as ink's useInput reports it. */
  press(input: string, key: EditorKey): void {
    if (input.length > 1 && input.includes('\r')) {
      // Keys typed ahead of a busy UI arrive as one string: each CR in it is an Enter.
      input.split(/(\r)/).forEach((part) => (part === '\r' ? this.press('', { return: true }) : part && this.press(part, {})));
      return;
    }
    if (key.ctrl && input === 'c') return this.interrupt();
    if (this.pending) return this.choose(key);
    if (this.elicitation) return this.fillIn(input, key);
    if (key.ctrl && input === 'd') {
      if (!this.editor.text) this.quit();
      return;
    }
    const outcome = this.editor.press(input, key);
    if (outcome === 'ignored') return;
    this.hint = '';
    if (outcome !== 'edited') void this.submit(outcome.submit.trim());
    this.changed();
  }

  /** Sends a question, or runs a `/command`. */
  async submit(text: string): Promise<void> {
    if (text.startsWith('/')) {
      await runSlashCommand(this, text).catch((err: unknown) => this.notice(err instanceof Error ? err.message : String(err), 'warn'));
      return;
    }
    if (this.running) {
      this.hint = 'an answer is running: wait for it, or Ctrl-C (/cancel) to cancel it';
      return this.changed();
    }
    await this.ask(text);
  }

  async ask(question: string): Promise<void> {
    this.lastQuestion = question;
    const run = (this.running = new AbortController());
    this.transcript.start(question);
    this.changed();
    try {
      for await (const event of this.backend.run(question, run.signal)) {
        this.usage.add(event);
        this.transcript.apply(event);
        this.changed();
      }
    } catch (err) {
      this.transcript.abort(err instanceof Error ? err.message : String(err));
    } finally {
      this.running = undefined;
      this.transcript.phase = { kind: 'idle' };
      this.hint = '';
      this.changed();
    }
  }

  // The commands' side (CommandContext).

  cancel(): boolean {
    if (!this.running) return false;
    this.running.abort();
    return true;
  }

  retry(): Promise<void> {
    if (!this.lastQuestion) throw new Error('nothing to retry yet');
    return this.ask(this.lastQuestion);
  }

  clear(): void {
    this.transcript.clear();
    this.clearScreen();
    this.clears++;
    this.changed();
  }

  quit(): void {
    this.running?.abort();
    this.exit();
  }

  private interrupt(): void {
    const now = Date.now();
    const again = now - this.lastInterrupt < DOUBLE_INTERRUPT_MS;
    this.lastInterrupt = now;
    if (again) return this.quit();
    if (this.cancel()) this.hint = 'cancelling… (Ctrl-C again to exit)';
    else {
      this.editor.set('');
      this.hint = 'Ctrl-C again to exit (or Ctrl-D, or /exit)';
    }
    this.changed();
  }

  private choose(key: EditorKey): void {
    const pending = this.pending!;
    const step = key.upArrow || key.leftArrow ? -1 : key.downArrow || key.rightArrow ? 1 : 0;
    if (step) {
      pending.choice = (pending.choice + step + APPROVAL_ANSWERS.length) % APPROVAL_ANSWERS.length;
      this.changed();
    } else if (key.return) pending.answer(APPROVAL_ANSWERS[pending.choice]!);
  }

  private fillIn(input: string, key: EditorKey): void {
    const pending = this.elicitation!;
    if (pending.step === 'choose') {
      const step = key.upArrow || key.leftArrow ? -1 : key.downArrow || key.rightArrow ? 1 : 0;
      if (step) {
        pending.choice = (pending.choice + step + ELICITATION_ACTIONS.length) % ELICITATION_ACTIONS.length;
        return this.changed();
      }
      if (!key.return) return;
      const action: ElicitationAction = ELICITATION_ACTIONS[pending.choice]!;
      if (action !== 'accept') return pending.answer({ action });
      if (pending.fields.length === 0) return pending.answer(pending.question.mode === 'form' ? { action: 'accept', content: {} } : { action: 'accept' });
      pending.step = 'field';
      this.editor.set('');
      return this.changed();
    }
    if (key.escape) return pending.answer({ action: 'cancel' });
    if (!key.return || key.meta) {
      if (this.editor.press(input, key) !== 'ignored') this.changed();
      return;
    }
    const field = pending.fields[pending.field]!;
    const read = readAnswer(field, this.editor.text);
    if (!read.ok) {
      pending.problem = read.problem;
      return this.changed();
    }
    if (read.value !== undefined) pending.content[field.name] = read.value;
    pending.problem = undefined;
    this.editor.set('');
    if (++pending.field < pending.fields.length) return this.changed();
    pending.answer({ action: 'accept', content: pending.content });
  }

  private changed(): void {
    this.version++;
    for (const listener of this.listeners) listener();
  }
}
