import { InputHistory } from './input-history.js';

/** The keys the editor reads: the subset of ink's `Key` it needs. */
export interface EditorKey {
  return?: boolean;
  meta?: boolean;
  ctrl?: boolean;
  backspace?: boolean;
  delete?: boolean;
  leftArrow?: boolean;
  rightArrow?: boolean;
  upArrow?: boolean;
  downArrow?: boolean;
  home?: boolean;
  end?: boolean;
  tab?: boolean;
  escape?: boolean;
}

/** What a key press did: the text to send, an edit to show, or nothing the editor handles. */
export type EditOutcome = { submit: string } | 'edited' | 'ignored';

/**
 * The question being typed: text and cursor, with history. Enter sends; a newline comes from a
 * trailing `\` before Enter, Alt+Enter or Ctrl+J, because terminals send Shift+Enter as plain Enter.
 */
export class LineEditor {
  text = '';
  cursor = 0;

  constructor(readonly history = new InputHistory()) {}

  /** Applies one key press (ink's `useInput` arguments). */
  press(input: string, key: EditorKey): EditOutcome {
    if ((key.return && key.meta) || input === '\n' || (key.ctrl && input === 'j')) return this.insert('\n');
    if (key.return) {
      if (this.text.slice(0, this.cursor).endsWith('\\')) {
        this.text = this.text.slice(0, this.cursor - 1) + this.text.slice(this.cursor);
        this.cursor--;
        return this.insert('\n');
      }
      const sent = this.text;
      if (!sent.trim()) return 'ignored';
      this.history.push(sent);
      this.set('');
      return { submit: sent };
    }
    if (key.backspace || (key.delete && this.cursor === this.text.length)) {
      // Most terminals send DEL (0x7f) for the backspace key, which ink reports as `delete`.
      if (this.cursor === 0) return 'ignored';
      this.text = this.text.slice(0, this.cursor - 1) + this.text.slice(this.cursor);
      this.cursor--;
      return 'edited';
    }
    if (key.delete) {
      this.text = this.text.slice(0, this.cursor) + this.text.slice(this.cursor + 1);
      return 'edited';
    }
    if (key.leftArrow) return this.moveTo(this.cursor - 1);
    if (key.rightArrow) return this.moveTo(this.cursor + 1);
    if (key.home || (key.ctrl && input === 'a')) return this.moveTo(this.lineStart());
    if (key.end || (key.ctrl && input === 'e')) return this.moveTo(this.lineEnd());
    if (key.ctrl && input === 'u') {
      this.set('');
      return 'edited';
    }
    if (key.upArrow) return this.show(this.history.older(this.text));
    if (key.downArrow) return this.show(this.history.newer());
    if (key.ctrl || key.meta || key.escape || key.tab || !input) return 'ignored';
    // Pasted text: newlines stay, other control characters are dropped.
    return this.insert(input.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ''));
  }

  /** Replaces the text, cursor at its end. */
  set(text: string): void {
    this.text = text;
    this.cursor = text.length;
  }

  private insert(text: string): EditOutcome {
    if (!text) return 'ignored';
    this.text = this.text.slice(0, this.cursor) + text + this.text.slice(this.cursor);
    this.cursor += text.length;
    return 'edited';
  }

  private moveTo(position: number): EditOutcome {
    this.cursor = Math.max(0, Math.min(this.text.length, position));
    return 'edited';
  }

  private show(entry: string | undefined): EditOutcome {
    if (entry === undefined) return 'ignored';
    this.set(entry);
    return 'edited';
  }

  private lineStart(): number {
    return this.text.lastIndexOf('\n', this.cursor - 1) + 1;
  }

  private lineEnd(): number {
    const end = this.text.indexOf('\n', this.cursor);
    return end < 0 ? this.text.length : end;
  }
}
