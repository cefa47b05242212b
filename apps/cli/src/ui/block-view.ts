import { Box, Text } from 'ink';
import { createElement as h, type ReactNode } from 'react';
import { diffLines } from './diff-lines.js';
import { renderMarkdown } from './markdown.js';
import { shortArgs } from './print-renderer.js';
import type { Block } from './transcript.js';

const DIFF_COLORS = { add: 'green', remove: 'red', hunk: 'cyan', context: undefined, note: 'gray' } as const;
const TODO_MARKS: Record<string, [string, string]> = { completed: ['[x]', 'green'], in_progress: ['[~]', 'yellow'], pending: ['[ ]', 'gray'] };
const APPROVAL_WORDS: Record<string, string> = { approve: '✔ approved', approve_all: '✔ approved (and the rest of this session)', reject: '✘ rejected' };

/** One finished block of the transcript. */
export function BlockView({ block, width }: { block: Block; width: number }): ReactNode {
  switch (block.kind) {
    case 'user':
      return h(Box, { marginTop: 1 }, h(Text, null, h(Text, { color: 'cyan', bold: true }, '› '), block.text));
    case 'answer':
      return h(Text, null, renderMarkdown(block.markdown, width));
    case 'tool':
      return h(Text, { color: 'cyan' }, `⚙ ${block.name} `, h(Text, { dimColor: true }, shortArgs(block.args)));
    case 'tool_failed':
      return h(Text, { color: 'yellow' }, `  ↳ ${block.status}: ${block.detail}`);
    case 'file':
      return h(FileBlock, { block });
    case 'todos':
      return h(
        Box,
        { flexDirection: 'column' },
        ...block.todos.map((todo, i) => {
          const [mark, color] = TODO_MARKS[todo.status] ?? ['[ ]', 'gray'];
          return h(Text, { key: i }, '  ', h(Text, { color }, mark), ` ${todo.content}`);
        }),
      );
    case 'approval':
      return h(Text, { color: block.answer === 'reject' ? 'red' : 'green' }, `${APPROVAL_WORDS[block.answer] ?? block.answer}: ${block.name}`);
    case 'error':
      return h(Text, { color: 'red' }, `✖ error: ${block.message}`, block.recoverable ? h(Text, { dimColor: true }, '  (recoverable: /retry sends it again)') : null);
    case 'cancelled':
      return h(Text, { color: 'yellow' }, block.reason === 'rejected' ? '⊘ cancelled: the call was rejected' : '⊘ cancelled');
    case 'notice':
      return h(Text, block.tone === 'warn' ? { color: 'yellow' } : { dimColor: true }, block.tone === 'warn' ? `! ${block.text}` : block.text);
  }
}

/** A file change: its path and +/- counts, then the diff's lines in colour. */
function FileBlock({ block }: { block: Extract<Block, { kind: 'file' }> }): ReactNode {
  return h(
    Box,
    { flexDirection: 'column', borderStyle: 'round', borderColor: 'gray', paddingX: 1 },
    h(Text, { bold: true }, `✎ ${block.operation} ${block.path}  `, h(Text, { color: 'green' }, `+${block.additions}`), ' ', h(Text, { color: 'red' }, `-${block.deletions}`)),
    ...diffLines(block.diff).map((line, i) => h(Text, { key: i, color: DIFF_COLORS[line.kind], wrap: 'truncate' }, line.text)),
  );
}
