import { Box, Static, Text, useInput, useStdout } from 'ink';
import Spinner from 'ink-spinner';
import { createElement as h, useEffect, useSyncExternalStore, type ReactNode } from 'react';
import { APPROVAL_ANSWERS } from '../hitl/approver.js';
import { BlockView } from './block-view.js';
import { promptLine } from '../hitl/form-prompt.js';
import type { InteractiveSession, PendingApproval, PendingElicitation } from './interactive-session.js';
import { renderMarkdown } from './markdown.js';
import type { NumberedBlock } from './transcript.js';

const ANSWER_LABELS = { approve: 'Approve', reject: 'Reject (ends the run)', approve_all: 'Approve all (the rest of this session)' } as const;
/** Erases the screen and its scrollback, cursor home. */
const CLEAR_SCREEN = '\u001b[2J\u001b[3J\u001b[H';
/** Longest argument value shown in an approval prompt. */
const ARG_SHOWN = 200;

/**
 * The interactive terminal UI: the finished transcript (printed once, then scrolled by the
 * terminal), the answer still streaming, the spinner, and the input or the approval prompt.
 */
export function App({ session }: { session: InteractiveSession }): ReactNode {
  useSyncExternalStore(session.subscribe, () => session.version);
  useInput((input, key) => session.press(input, key));
  const { stdout, write } = useStdout();
  const width = Math.max(40, (stdout.columns || 80) - 2);
  // ink's write puts the live area back after the wipe (a plain stdout write would leave it blank).
  useEffect(() => {
    session.clearScreen = () => write(CLEAR_SCREEN);
  }, [session, write]);
  const { transcript, pending } = session;
  const phase = transcript.phase;
  return h(
    Box,
    { flexDirection: 'column' },
    h(Static, { key: session.clears, items: transcript.blocks, children: (block) => h(BlockView, { key: (block as NumberedBlock).id, block: block as NumberedBlock, width }) }),
    transcript.streaming ? h(Text, null, renderMarkdown(transcript.streaming, width)) : null,
    phase.kind === 'thinking' || phase.kind === 'tool'
      ? h(Text, null, h(Text, { color: 'green' }, h(Spinner, { type: 'dots' })), phase.kind === 'tool' ? ` running ${phase.name}…` : ' thinking…')
      : null,
    pending ? h(ApprovalPrompt, { pending }) : session.elicitation ? h(ElicitationPrompt, { session, pending: session.elicitation }) : h(InputLine, { session }),
  );
}

const ELICITATION_LABELS = { accept: 'Accept', decline: 'Decline', cancel: 'Cancel' } as const;

/** An MCP server's question: its message (and URL), then accept/decline/cancel, then each field of an accepted form. */
function ElicitationPrompt({ session, pending }: { session: InteractiveSession; pending: PendingElicitation }): ReactNode {
  const { question } = pending;
  const field = pending.step === 'field' ? pending.fields[pending.field] : undefined;
  return h(
    Box,
    { flexDirection: 'column', borderStyle: 'round', borderColor: 'yellow', paddingX: 1 },
    h(Text, { bold: true }, `${question.server} asks: `, h(Text, { bold: false }, question.message)),
    question.url ? h(Text, null, 'open: ', h(Text, { color: 'cyan', underline: true }, question.url), h(Text, { dimColor: true }, `  (${hostOf(question.url)})`)) : null,
    ...(field
      ? [
          h(Text, { key: 'field' }, `${pending.field + 1}/${pending.fields.length} ${promptLine(field)}`),
          field.description ? h(Text, { key: 'about', dimColor: true }, `  ${field.description}`) : null,
          h(Text, { key: 'line' }, h(Text, { color: 'cyan', bold: true }, '› '), session.editor.text, h(Text, { inverse: true }, ' ')),
          pending.problem ? h(Text, { key: 'problem', color: 'red' }, `  ${pending.problem}`) : null,
          h(Text, { key: 'help', dimColor: true }, 'Enter next field · Esc cancel the question · Ctrl-C cancel the run'),
        ]
      : [
          ...(['accept', 'decline', 'cancel'] as const).map((action, i) =>
            h(Text, { key: action, color: i === pending.choice ? 'cyan' : undefined, bold: i === pending.choice }, `${i === pending.choice ? '❯' : ' '} ${ELICITATION_LABELS[action]}${action === 'accept' && pending.fields.length > 0 ? ` (fill in ${pending.fields.length} field${pending.fields.length === 1 ? '' : 's'})` : ''}`),
          ),
          h(Text, { key: 'help', dimColor: true }, '↑/↓ choose · Enter confirm · Ctrl-C cancel the run'),
        ]),
  );
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'not a web address';
  }
}

function ApprovalPrompt({ pending }: { pending: PendingApproval }): ReactNode {
  const { name, args } = pending.question.action;
  return h(
    Box,
    { flexDirection: 'column', borderStyle: 'round', borderColor: 'yellow', paddingX: 1 },
    h(Text, { bold: true }, `approve ${name}?`),
    ...Object.entries(args ?? {}).map(([key, value]) => h(Text, { key, wrap: 'truncate' }, `  ${key}: `, h(Text, { dimColor: true }, argText(value)))),
    ...APPROVAL_ANSWERS.map((answer, i) =>
      h(Text, { key: answer, color: i === pending.choice ? 'cyan' : undefined, bold: i === pending.choice }, `${i === pending.choice ? '❯' : ' '} ${ANSWER_LABELS[answer]}`),
    ),
    h(Text, { dimColor: true }, '↑/↓ choose · Enter confirm · Ctrl-C cancel the run'),
  );
}

function InputLine({ session }: { session: InteractiveSession }): ReactNode {
  const { text, cursor } = session.editor;
  const under = text[cursor];
  // Continuation lines are indented under the prompt.
  const indent = (s: string) => s.replace(/\n/g, '\n  ');
  const help = session.busy ? 'Ctrl-C cancel' : 'Enter send · \\+Enter new line · ↑↓ history · /help';
  return h(
    Box,
    { flexDirection: 'column', marginTop: 1 },
    h(
      Text,
      null,
      h(Text, { color: 'cyan', bold: true }, '› '),
      indent(text.slice(0, cursor)),
      h(Text, { inverse: true }, under === undefined || under === '\n' ? ' ' : under),
      indent((under === '\n' ? '\n' : '') + text.slice(cursor + 1)),
    ),
    h(Text, { dimColor: true }, session.hint || `${help} · ${session.mode}${session.backend.sessionId ? ` · session ${session.backend.sessionId.slice(0, 8)}` : ''}`),
  );
}

function argText(value: unknown): string {
  const text = typeof value === 'string' ? value.replace(/\n/g, '⏎') : JSON.stringify(value);
  return text.length > ARG_SHOWN ? `${text.slice(0, ARG_SHOWN - 1)}…` : text;
}
