import type { EventDict } from '#core/events/execution-event.js';
import { A2aTaskProjection } from './a2a-task-projection.js';

const base = { session_id: 's1', run_id: 'r1', timestamp: '2026-01-01T00:00:00.000Z' };
const ev = (seq: number, body: Record<string, unknown>) => ({ ...base, seq, ...body }) as unknown as EventDict;
const meta = (seq: number) => ({ dataagent: { seq } });

describe('A2aTaskProjection', () => {
  it('turns a run with text, a tool call and its result into status and artifact updates, and a task snapshot', () => {
    const p = new A2aTaskProjection('r1', 's1');
    const updates = [
      ev(1, { event_type: 'run_queued' }),
      ev(2, { event_type: 'run_started', worker_id: 'w' }),
      ev(3, { event_type: 'text', content: 'Let me ', is_final: false }),
      ev(4, { event_type: 'tool_call', tool_name: 'ls', tool_args: { path: '.' }, tool_call_id: 'c1' }),
      ev(5, { event_type: 'tool_result', tool_call_id: 'c1', result: 'a b', status: 'success' }),
      ev(6, { event_type: 'text', content: 'look.', is_final: true }),
      ev(7, { event_type: 'done', cancelled: false }),
    ].flatMap((e) => p.apply(e));
    const envelope = { taskId: 'r1', contextId: 's1' };
    expect(updates).toEqual([
      { statusUpdate: { ...envelope, status: { state: 'TASK_STATE_WORKING', timestamp: base.timestamp }, metadata: meta(2) } },
      { artifactUpdate: { ...envelope, artifact: { artifactId: 'r1:answer', name: 'answer', parts: [{ text: 'Let me ' }] }, append: false, lastChunk: false, metadata: meta(3) } },
      {
        statusUpdate: {
          ...envelope,
          status: {
            state: 'TASK_STATE_WORKING',
            message: { messageId: 'r1:4', ...envelope, role: 'ROLE_AGENT', parts: [{ data: { type: 'tool_call', tool_call_id: 'c1', tool_name: 'ls', tool_args: { path: '.' } }, mediaType: 'application/json' }] },
            timestamp: base.timestamp,
          },
          metadata: meta(4),
        },
      },
      {
        statusUpdate: {
          ...envelope,
          status: {
            state: 'TASK_STATE_WORKING',
            message: { messageId: 'r1:5', ...envelope, role: 'ROLE_AGENT', parts: [{ data: { type: 'tool_result', tool_call_id: 'c1', status: 'success', result: 'a b' }, mediaType: 'application/json' }] },
            timestamp: base.timestamp,
          },
          metadata: meta(5),
        },
      },
      { artifactUpdate: { ...envelope, artifact: { artifactId: 'r1:answer', name: 'answer', parts: [{ text: 'look.' }] }, append: true, lastChunk: true, metadata: meta(6) } },
      { statusUpdate: { ...envelope, status: { state: 'TASK_STATE_COMPLETED', timestamp: base.timestamp }, metadata: meta(7) } },
    ]);
    expect(p.task()).toEqual({
      id: 'r1',
      contextId: 's1',
      status: { state: 'TASK_STATE_COMPLETED', timestamp: base.timestamp },
      artifacts: [{ artifactId: 'r1:answer', name: 'answer', parts: [{ text: 'Let me look.' }] }],
      metadata: { dataagent: { session_id: 's1', run_id: 'r1', seq: 7 } },
    });
    expect(p.final).toBe(true);
  });

  it('waits in input-required with the question while an approval is open, and works again once answered', () => {
    const p = new A2aTaskProjection('r1', 's1');
    p.apply(ev(1, { event_type: 'run_started', worker_id: 'w' }));
    p.apply(ev(2, { event_type: 'tool_call', tool_name: 'write_file', tool_args: { path: 'a.txt' }, tool_call_id: 'c1' }));
    const [asked] = p.apply(ev(3, { event_type: 'hitl_request', request_id: 'r1:c1:abc', action_request: { name: 'write_file', args: { path: 'a.txt' } }, allowed_decisions: ['approve', 'reject'] }));
    expect(asked).toMatchObject({ statusUpdate: { status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { parts: [{ text: expect.stringContaining('Approve write_file') }, { data: { type: 'approval_request', request_id: 'r1:c1:abc' } }] } } } });
    expect(p.settled).toBe(true);
    expect(p.pendingApproval()?.request_id).toBe('r1:c1:abc');
    expect(p.pendingApproval('other')).toBeUndefined();
    // A snapshot taken now asks the same question.
    expect(p.task().status).toMatchObject({ state: 'TASK_STATE_INPUT_REQUIRED', message: { messageId: 'r1:3' } });
    p.answered('r1:c1:abc');
    expect(p.task().status.state).toBe('TASK_STATE_WORKING');
    expect(p.settled).toBe(false);
    expect(p.apply(ev(4, { event_type: 'tool_result', tool_call_id: 'c1', result: 'ok', status: 'success' }))).toHaveLength(1);
  });

  it("takes an approval whose call was closed timeout as expired, before the run's done is in", () => {
    const p = new A2aTaskProjection('r1', 's1');
    p.apply(ev(1, { event_type: 'tool_call', tool_name: 'write_file', tool_args: { path: 'a.txt' }, tool_call_id: 'c1' }));
    p.apply(ev(2, { event_type: 'hitl_request', request_id: 'r1:c1:abc', action_request: { name: 'write_file', args: { path: 'a.txt' } }, allowed_decisions: ['approve', 'reject'] }));
    expect(p.expiredApproval('r1:c1:abc')).toBeUndefined();
    p.apply(ev(3, { event_type: 'tool_result', tool_call_id: 'c1', result: { error: 'no answer in time' }, status: 'timeout' }));
    expect(p.pendingApproval('r1:c1:abc')).toBeUndefined();
    expect(p.expiredApproval('r1:c1:abc')).toBe('r1:c1:abc');
    expect(p.expiredApproval()).toBe('r1:c1:abc');
    expect(p.expiredApproval('r1:c2:def')).toBeUndefined();
  });

  it('ends canceled on a cancelled done, failed after a fatal error, and ignores events already folded in or of another run', () => {
    const cancelled = new A2aTaskProjection('r1', 's1');
    cancelled.apply(ev(1, { event_type: 'text', content: 'x', is_final: false }));
    expect(cancelled.apply(ev(1, { event_type: 'text', content: 'x', is_final: false }))).toEqual([]);
    expect(cancelled.apply({ ...ev(2, { event_type: 'text', content: 'y', is_final: false }), run_id: 'r2' } as EventDict)).toEqual([]);
    expect(cancelled.apply(ev(2, { event_type: 'done', cancelled: true, reason: 'cancelled' }))).toMatchObject([{ statusUpdate: { status: { state: 'TASK_STATE_CANCELED', message: { parts: [{ text: 'The run was cancelled.' }, { data: { type: 'done' } }] } } } }]);
    expect(cancelled.task().artifacts[0].parts).toEqual([{ text: 'x' }]);

    const failed = new A2aTaskProjection('r1', 's1');
    expect(failed.apply(ev(1, { event_type: 'error', error: 'model down', recoverable: false }))).toEqual([]);
    expect(failed.apply(ev(2, { event_type: 'done', cancelled: false }))).toMatchObject([{ statusUpdate: { status: { state: 'TASK_STATE_FAILED', message: { parts: [{ text: 'model down' }, { data: { type: 'done' } }] } } } }]);
  });
});
