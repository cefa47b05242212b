import { LineEditor } from './line-editor.js';

function typed(editor: LineEditor, text: string): void {
  for (const c of text) editor.press(c, {});
}

describe('LineEditor', () => {
  it('sends the text on Enter and starts empty again', () => {
    const editor = new LineEditor();
    typed(editor, 'hello');
    expect(editor.press('', { return: true })).toEqual({ submit: 'hello' });
    expect(editor.text).toBe('');
    expect(editor.press('', { return: true })).toBe('ignored');
  });

  it('makes a new line from a trailing backslash + Enter, Alt+Enter or Ctrl+J', () => {
    const editor = new LineEditor();
    typed(editor, 'a\\');
    editor.press('', { return: true });
    typed(editor, 'b');
    editor.press('', { return: true, meta: true });
    typed(editor, 'c');
    editor.press('\n', {});
    typed(editor, 'd');
    expect(editor.text).toBe('a\nb\nc\nd');
    expect(editor.press('', { return: true })).toEqual({ submit: 'a\nb\nc\nd' });
  });

  it('edits at the cursor: arrows, backspace (DEL too), delete, home and end of the line', () => {
    const editor = new LineEditor();
    typed(editor, 'helo');
    editor.press('', { leftArrow: true });
    typed(editor, 'l');
    expect(editor.text).toBe('hello');
    editor.press('a', { ctrl: true });
    editor.press('', { delete: true });
    expect(editor.text).toBe('ello');
    editor.press('e', { ctrl: true });
    editor.press('', { delete: true }); // at the end: DEL, as terminals send for backspace
    editor.press('', { backspace: true });
    expect(editor.text).toBe('el');
    editor.press('u', { ctrl: true });
    expect(editor.text).toBe('');
  });

  it('keeps pasted newlines and drops other control characters', () => {
    const editor = new LineEditor();
    editor.press('x\u0007y\nz', {});
    expect(editor.text).toBe('xy\nz');
  });

  it('walks the history with up and down, and gives the draft back', () => {
    const editor = new LineEditor();
    for (const q of ['first', 'second']) {
      typed(editor, q);
      editor.press('', { return: true });
    }
    typed(editor, 'draft');
    editor.press('', { upArrow: true });
    expect(editor.text).toBe('second');
    editor.press('', { upArrow: true });
    expect(editor.text).toBe('first');
    expect(editor.press('', { upArrow: true })).toBe('ignored');
    editor.press('', { downArrow: true });
    editor.press('', { downArrow: true });
    expect(editor.text).toBe('draft');
    expect(editor.cursor).toBe(5);
  });
});
