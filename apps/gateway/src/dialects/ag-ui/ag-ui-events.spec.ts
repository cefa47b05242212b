import { EventSchema } from '@ag-ui/core/schemas';
import type { EventDict } from '#core/events/execution-event.js';
import { AgUiProjection, type AgUiEvent, type ResumePoint } from './ag-ui-events.js';

const base = { session_id: 's', run_id: 'r1', timestamp: '2026-01-01T00:00:00.000Z' };
const ev = (seq: number, body: Record<string, unknown>) => ({ ...base, seq, ...body }) as unknown as EventDict;

/** A run with text, an approval, the tool's result and more text. */
const run = [
  ev(1, { event_type: 'run_queued' }),
  ev(2, { event_type: 'run_started', worker_id: 'w' }),
  ev(3, { event_type: 'text', content: 'Let me ', is_final: false }),
  ev(4, { event_type: 'text', content: 'write.', is_final: false }),
  ev(5, { event_type: 'tool_call', tool_name: 'write_file', tool_args: { path: 'a' }, tool_call_id: 'c1' }),
  ev(6, { event_type: 'hitl_request', request_id: 'r1:c1:abcdef0123456789', action_request: { name: 'write_file', args: { path: 'a' } }, allowed_decisions: ['approve', 'reject'] }),
  ev(7, { event_type: 'tool_result', tool_call_id: 'c1', result: { ok: true }, status: 'success' }),
  ev(8, { event_type: 'text', content: 'Done.', is_final: true }),
  ev(9, { event_type: 'done', cancelled: false, usage: { input_tokens: 10, output_tokens: 5 } }),
];

/** Reads the log until the AG-UI run ends, as the controller does. */
function project(events: EventDict[], from?: ResumePoint): AgUiEvent[] {
  const p = new AgUiProjection('t', 'agui-run', from);
  const out: AgUiEvent[] = [];
  for (const e of events) {
    const { events: sent, ends } = p.next(e);
    out.push(...sent);
    if (ends) break;
  }
  return out;
}
const brief = (events: AgUiEvent[]) => events.map(({ metadata, timestamp, ...rest }) => ({ ...rest, seq: metadata.dataagent.seq }));

describe('AgUiProjection', () => {
  it('ends the first AG-UI run at the approval with an interrupt outcome, every event valid AG-UI 1.0', () => {
    const out = project(run);
    for (const e of out) expect(() => EventSchema.parse(e)).not.toThrow();
    expect(brief(out)).toEqual([
      { type: 'TEXT_MESSAGE_START', messageId: 'r1:text:1', role: 'assistant', seq: 3 },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'r1:text:1', delta: 'Let me ', seq: 3 },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'r1:text:1', delta: 'write.', seq: 4 },
      { type: 'TEXT_MESSAGE_END', messageId: 'r1:text:1', seq: 5 },
      { type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'write_file', parentMessageId: 'r1:text:1', seq: 5 },
      { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{"path":"a"}', seq: 5 },
      { type: 'TOOL_CALL_END', toolCallId: 'c1', seq: 5 },
      {
        type: 'RUN_FINISHED',
        threadId: 't',
        runId: 'agui-run',
        outcome: { type: 'interrupt', interrupts: [expect.objectContaining({ id: 'r1:c1:abcdef0123456789', reason: 'tool_approval', toolCallId: 'c1' })] },
        seq: 6,
      },
    ]);
  });

  it('continues after the answered approval: the result, new text and the finish, nothing before', () => {
    const out = project(run, { afterSeq: 0, afterRequest: 'r1:c1:abcdef0123456789' });
    for (const e of out) expect(() => EventSchema.parse(e)).not.toThrow();
    expect(brief(out)).toEqual([
      { type: 'TOOL_CALL_RESULT', messageId: 'r1:result:c1', toolCallId: 'c1', content: '{"ok":true}', role: 'tool', seq: 7 },
      { type: 'TEXT_MESSAGE_START', messageId: 'r1:text:2', role: 'assistant', seq: 8 },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'r1:text:2', delta: 'Done.', seq: 8 },
      { type: 'TEXT_MESSAGE_END', messageId: 'r1:text:2', seq: 9 },
      { type: 'RUN_FINISHED', threadId: 't', runId: 'agui-run', outcome: { type: 'success' }, usage: [{ inputTokens: 10, outputTokens: 5, totalTokens: 15 }], seq: 9 },
    ]);
  });

  it('re-attaches after a cursor mid-message: reopens the same message and sends only what came after', () => {
    const out = project(run, { afterSeq: 3 });
    expect(brief(out).slice(0, 3)).toEqual([
      { type: 'TEXT_MESSAGE_START', messageId: 'r1:text:1', role: 'assistant', seq: 4 },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'r1:text:1', delta: 'write.', seq: 4 },
      { type: 'TEXT_MESSAGE_END', messageId: 'r1:text:1', seq: 5 },
    ]);
    expect(out.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
  });

  it('still ends a run whose end the client had not seen, even when the cursor is past everything else', () => {
    expect(brief(project(run, { afterSeq: 9, afterRequest: 'r1:c1:abcdef0123456789' })).map((e) => e.type)).toEqual(['TEXT_MESSAGE_END', 'RUN_FINISHED']);
  });

  it('leaves a call to the client\'s tool pending, cancels on a cancelled done, fails on a fatal error', () => {
    const client = project([
      ev(3, { event_type: 'tool_call', tool_name: 'get_weather', tool_args: { city: 'Oslo' }, tool_call_id: 'k1', client: true }),
      ev(4, { event_type: 'text', content: '', is_final: true }),
      ev(5, { event_type: 'done', cancelled: false, reason: 'tool_calls' }),
    ]);
    expect(client.map((e) => e.type)).toEqual(['TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'RUN_FINISHED']);
    expect(client.at(-1)).toMatchObject({ outcome: { type: 'success', pendingToolCallIds: ['k1'] } });
    expect(project([ev(3, { event_type: 'text', content: 'x', is_final: false }), ev(4, { event_type: 'done', cancelled: true, reason: 'cancelled' })]).slice(-2).map((e) => e.type)).toEqual(['TEXT_MESSAGE_END', 'RUN_FINISHED']);
    expect(project([ev(4, { event_type: 'done', cancelled: true })]).at(-1)).toMatchObject({ outcome: { type: 'cancelled' } });
    const failed = project([ev(3, { event_type: 'error', error: 'sign in', recoverable: true, error_code: 'mcp_sign_in_required' }), ev(4, { event_type: 'error', error: 'boom', recoverable: false, error_code: 'llm_failed' }), ev(5, { event_type: 'done', cancelled: false })]);
    for (const e of failed) expect(() => EventSchema.parse(e)).not.toThrow();
    expect(brief(failed)).toEqual([
      { type: 'CUSTOM', name: 'dataagent.notice', value: { error_code: 'mcp_sign_in_required', message: 'sign in' }, seq: 3 },
      { type: 'RUN_ERROR', message: 'boom', code: 'llm_failed', seq: 4 },
    ]);
  });
});
