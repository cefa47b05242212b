import type { EventDict } from '#core/events/execution-event.js';
import { UiMessageProjection } from './ui-message-chunks.js';

const base = { session_id: 's', run_id: 'r1', timestamp: '2026-01-01T00:00:00.000Z' };
const ev = (seq: number, body: Record<string, unknown>) => ({ ...base, seq, ...body }) as unknown as EventDict;

describe('UiMessageProjection', () => {
  it('turns a run with text, an approval, a tool call and its result into one assistant message', () => {
    const p = new UiMessageProjection();
    const chunks = [
      ev(1, { event_type: 'run_queued' }),
      ev(2, { event_type: 'run_started', worker_id: 'w' }),
      ev(3, { event_type: 'text', content: 'Let me ', is_final: false }),
      ev(4, { event_type: 'text', content: 'look.', is_final: false }),
      ev(5, { event_type: 'tool_call', tool_name: 'shell', tool_args: { cmd: 'ls' }, tool_call_id: 'c1' }),
      ev(6, { event_type: 'hitl_request', request_id: 'r1:c1:abcdef0123456789', action_request: { name: 'shell', args: {} }, allowed_decisions: ['approve', 'reject'] }),
      ev(7, { event_type: 'tool_result', tool_call_id: 'c1', result: 'a b', status: 'success' }),
      ev(8, { event_type: 'text', content: 'Done.', is_final: true }),
      ev(9, { event_type: 'done', cancelled: false }),
    ].flatMap((e) => p.chunksOf(e));
    expect(chunks).toEqual([
      { type: 'start', messageId: 'r1' },
      { type: 'start-step' },
      { type: 'text-start', id: 'r1:1' },
      { type: 'text-delta', id: 'r1:1', delta: 'Let me ' },
      { type: 'text-delta', id: 'r1:1', delta: 'look.' },
      { type: 'text-end', id: 'r1:1' },
      { type: 'tool-input-available', toolCallId: 'c1', toolName: 'shell', input: { cmd: 'ls' }, dynamic: true },
      { type: 'tool-approval-request', approvalId: 'r1:c1:abcdef0123456789', toolCallId: 'c1' },
      { type: 'tool-output-available', toolCallId: 'c1', output: 'a b', dynamic: true },
      { type: 'text-start', id: 'r1:2' },
      { type: 'text-delta', id: 'r1:2', delta: 'Done.' },
      { type: 'text-end', id: 'r1:2' },
      { type: 'finish-step' },
      { type: 'finish', finishReason: 'stop' },
    ]);
  });

  it('ends a cancelled run with abort, a rejected call as denied, and keeps recoverable errors as data', () => {
    const p = new UiMessageProjection();
    expect(p.chunksOf(ev(3, { event_type: 'tool_result', tool_call_id: 'c1', result: 'no', status: 'rejected' }))).toEqual([{ type: 'tool-output-denied', toolCallId: 'c1' }]);
    expect(p.chunksOf(ev(4, { event_type: 'tool_result', tool_call_id: 'c2', result: { error: 'boom' }, status: 'error' }))).toEqual([{ type: 'tool-output-error', toolCallId: 'c2', errorText: 'boom', dynamic: true }]);
    expect(p.chunksOf(ev(5, { event_type: 'error', error: 'sign in', recoverable: true, error_code: 'mcp_sign_in_required' }))).toEqual([
      { type: 'data-dataagent-notice', data: { error_code: 'mcp_sign_in_required', message: 'sign in' }, transient: true },
    ]);
    expect(p.chunksOf(ev(6, { event_type: 'done', cancelled: true, reason: 'cancelled' }))).toEqual([{ type: 'finish-step' }, { type: 'abort', reason: 'cancelled' }]);
  });
});
