/** One line of a unified diff, with what it is for colouring. */
export interface DiffLine {
  kind: 'add' | 'remove' | 'hunk' | 'context' | 'note';
  text: string;
}

/** Lines shown of a diff; the rest is summarised in one line. */
const MAX_LINES = 40;

/**
 * The lines of a `file_operation` diff worth showing: hunks and their lines, without the file
 * headers (the block's title names the file), cut to `max` lines.
 */
export function diffLines(diff: string, max = MAX_LINES): DiffLine[] {
  const lines: DiffLine[] = [];
  for (const text of diff.split('\n')) {
    if (text === '' || text.startsWith('---') || text.startsWith('+++') || text.startsWith('===') || text.startsWith('Index:')) continue;
    if (text.startsWith('\\')) continue; // "\ No newline at end of file"
    const kind = text.startsWith('@@') ? 'hunk' : text.startsWith('+') ? 'add' : text.startsWith('-') ? 'remove' : text.startsWith(' ') ? 'context' : 'note';
    lines.push({ kind, text });
  }
  if (lines.length <= max) return lines;
  return [...lines.slice(0, max), { kind: 'note', text: `… ${lines.length - max} more lines` }];
}
