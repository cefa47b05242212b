import type { EventDict } from '#core/events/execution-event.js';
import { ResponseProjection, responseIdOf, windowOf, type ResponseStreamEvent } from './response-projection.js';

const RUN = '0b5e7d52-6f0e-4d5c-9b0a-2f4b8b3c1a11';
const base = { session_id: 's', run_id: RUN, timestamp: '2026-01-01T00:00:10.000Z' };
const ev = (seq: number, body: Record<string, unknown>) => ({ ...base, seq, ...body }) as unknown as EventDict;
const REQUEST = `${RUN}:c1:abcdef0123456789`;

/** A run that writes, asks for approval to write a file, is approved, writes the file and answers. */
const RUN_LOG = [
  ev(1, { event_type: 'run_queued' }),
  ev(2, { event_type: 'run_started', worker_id: 'w' }),
  ev(3, { event_type: 'text', content: 'Let me ', is_final: false }),
  ev(4, { event_type: 'text', content: 'write.', is_final: false }),
  ev(5, { event_type: 'tool_call', tool_name: 'write_file', tool_args: { path: 'a.txt' }, tool_call_id: 'c1' }),
  ev(6, { event_type: 'hitl_request', request_id: REQUEST, action_request: { name: 'write_file', args: { path: 'a.txt' } }, allowed_decisions: ['approve', 'reject'] }),
  ev(7, { event_type: 'tool_result', tool_call_id: 'c1', result: 'wrote 1 byte', status: 'success' }),
  ev(8, { event_type: 'text', content: 'Done.', is_final: true }),
  ev(9, { event_type: 'done', cancelled: false, usage: { input_tokens: 10, output_tokens: 5 } }),
];

const project = (afterSeq: number, events = RUN_LOG) => {
  const p = new ResponseProjection({ runId: RUN, afterSeq }, 'default');
  return { p, out: events.flatMap((e) => p.eventsOf(e)) };
};

describe('ResponseProjection', () => {
  it("ends the run's first response at the approval request, with the text before it", () => {
    const { p, out } = project(0);
    expect(out.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(out.map((e) => e.sequence_number)).toEqual(out.map((_, i) => i));
    expect(out[0]).toMatchObject({ response: { id: `resp_${RUN}`, status: 'queued', created_at: 1767225610, model: 'default' } });
    expect(out[6]).toMatchObject({ item_id: `msg_${RUN}_3`, text: 'Let me write.' });
    expect(out[10]).toMatchObject({ output_index: 1, item: { type: 'mcp_approval_request', id: REQUEST, server_label: 'dataagent', name: 'write_file', arguments: '{"path":"a.txt"}' } });
    expect(p.isEnded).toBe(true);
    expect(p.snapshot()).toMatchObject({ status: 'completed', output_text: 'Let me write.', usage: null });
  });

  it('continues after the approval request in the next response: the tool ran (mcp_call with its output), then the answer', () => {
    const { p, out } = project(6);
    expect(out.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.mcp_call.completed',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(out[0]).toMatchObject({ sequence_number: 0, response: { id: `resp_${RUN}_6`, status: 'in_progress' } });
    expect(out[2]).toMatchObject({ item: { type: 'mcp_call', status: 'in_progress', output: null } });
    expect(out[4]).toMatchObject({ item: { type: 'mcp_call', id: 'mcp_c1', name: 'write_file', arguments: '{"path":"a.txt"}', output: 'wrote 1 byte', status: 'completed', approval_request_id: REQUEST } });
    expect(p.snapshot()).toMatchObject({ status: 'completed', output_text: 'Done.', usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } });
  });

  it('numbers the same log the same way every time: a resume from any sequence_number has no gap and no duplicate', () => {
    const whole = project(0, RUN_LOG.filter((e) => e.event_type !== 'hitl_request')).out;
    for (let cut = 0; cut < whole.length; cut++) {
      const again = project(0, RUN_LOG.filter((e) => e.event_type !== 'hitl_request')).out;
      const resumed: ResponseStreamEvent[] = [...whole.slice(0, cut + 1), ...again.filter((e) => e.sequence_number > cut)];
      expect(resumed).toEqual(whole);
    }
  });

  it("shows a client's function call for it to run, a failed tool, a cancel and a failure", () => {
    const call = project(0, [
      ev(1, { event_type: 'run_queued' }),
      ev(2, { event_type: 'tool_call', tool_name: 'get_weather', tool_args: { city: 'Oslo' }, tool_call_id: 'k1', client: true }),
      ev(3, { event_type: 'done', cancelled: false, reason: 'tool_calls' }),
    ]);
    expect(call.out.find((e) => e.type === 'response.function_call_arguments.done')).toMatchObject({ item_id: 'fc_k1', arguments: '{"city":"Oslo"}' });
    expect(call.p.snapshot()).toMatchObject({ status: 'completed', output: [{ type: 'function_call', call_id: 'k1', name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed' }] });

    const failedTool = project(0, [
      ev(1, { event_type: 'tool_call', tool_name: 'github.create_issue', tool_args: {}, tool_call_id: 't1' }),
      ev(2, { event_type: 'tool_result', tool_call_id: 't1', result: { error: 'boom' }, status: 'error' }),
    ]);
    expect(failedTool.p.snapshot().output).toEqual([{ type: 'mcp_call', id: 'mcp_t1', server_label: 'github', name: 'create_issue', arguments: '{}', output: null, error: 'error: boom', status: 'failed' }]);

    const cancelled = project(0, [ev(1, { event_type: 'run_queued' }), ev(2, { event_type: 'done', cancelled: true, reason: 'cancelled' })]);
    expect(cancelled.out.at(-1)).toMatchObject({ type: 'response.incomplete', response: { status: 'cancelled', incomplete_details: { reason: 'cancelled' } } });

    const failed = project(0, [ev(1, { event_type: 'error', error: 'model down', recoverable: false, error_code: 'llm_error' }), ev(2, { event_type: 'done', cancelled: false })]);
    expect(failed.out.at(-1)).toMatchObject({ type: 'response.failed', response: { status: 'failed', error: { code: 'llm_error', message: 'model down' } } });
  });

  it('names a window by its run and the approval it follows, and refuses other ids', () => {
    expect(responseIdOf({ runId: RUN, afterSeq: 0 })).toBe(`resp_${RUN}`);
    expect(windowOf(`resp_${RUN}_6`)).toEqual({ runId: RUN, afterSeq: 6 });
    expect(windowOf(`resp_${RUN}`)).toEqual({ runId: RUN, afterSeq: 0 });
    for (const bad of [`resp_${RUN}_0`, `resp_${RUN}_x`, RUN, 'resp_nope', `resp_${RUN.toUpperCase()}`]) expect(windowOf(bad)).toBeUndefined();
  });
});
