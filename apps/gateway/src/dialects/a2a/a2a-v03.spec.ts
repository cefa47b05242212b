import type { EventDict } from '#core/events/execution-event.js';
import { A2aTaskProjection } from './a2a-task-projection.js';
import { V03_METHODS, v03StreamResponse, v03Task } from './a2a-v03.js';

const base = { session_id: 's1', run_id: 'r1', timestamp: '2026-01-01T00:00:00.000Z' };
const ev = (seq: number, body: Record<string, unknown>) => ({ ...base, seq, ...body }) as unknown as EventDict;

describe('A2A 0.3 shapes', () => {
  it("writes 1.0's task and stream items as 0.3's kind-tagged objects, final on an end or a wait for input", () => {
    const p = new A2aTaskProjection('r1', 's1');
    const items = [
      ev(1, { event_type: 'run_started', worker_id: 'w' }),
      ev(2, { event_type: 'text', content: 'Hi', is_final: false }),
      ev(3, { event_type: 'hitl_request', request_id: 'r1:c1:abc', action_request: { name: 'shell', args: {} }, allowed_decisions: ['approve', 'reject'] }),
    ]
      .flatMap((e) => p.apply(e))
      .map(v03StreamResponse);
    expect(items[0]).toEqual({ kind: 'status-update', taskId: 'r1', contextId: 's1', status: { state: 'working', timestamp: base.timestamp }, final: false, metadata: { dataagent: { seq: 1 } } });
    expect(items[1]).toEqual({ kind: 'artifact-update', taskId: 'r1', contextId: 's1', artifact: { artifactId: 'r1:answer', name: 'answer', parts: [{ kind: 'text', text: 'Hi' }] }, append: false, lastChunk: false, metadata: { dataagent: { seq: 2 } } });
    expect(items[2]).toMatchObject({
      kind: 'status-update',
      final: true,
      status: { state: 'input-required', message: { kind: 'message', role: 'agent', messageId: 'r1:3', parts: [{ kind: 'text' }, { kind: 'data', data: { type: 'approval_request', request_id: 'r1:c1:abc' } }] } },
    });
    expect(v03Task(p.task())).toMatchObject({ kind: 'task', id: 'r1', contextId: 's1', status: { state: 'input-required' }, artifacts: [{ parts: [{ kind: 'text', text: 'Hi' }] }] });
  });

  it("maps 0.3's method names onto 1.0's", () => {
    expect(V03_METHODS['message/send']).toBe('SendMessage');
    expect(V03_METHODS['tasks/resubscribe']).toBe('SubscribeToTask');
    expect(V03_METHODS['SendMessage']).toBeUndefined();
  });
});
