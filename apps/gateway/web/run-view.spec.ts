import { TOOL_RESULT_STATUSES } from '#core/events/execution-event.js';
import type { EventDict, EventDictOf, EventType } from './events.js';
import { applyEvent, diffLines, foldEvents, historyItems, newTurn, pendingApprovals, pendingElicitations, shortArgs, usageLine, type ToolBlock, type Turn } from './run-view.js';

const RUN = 'run-1';
let seq = 0;
// Only the fields a case needs: the UI must cope with what it is given.
const ev = <T extends EventType>(event_type: T, fields: Partial<EventDictOf<T>> = {}) =>
  ({ event_type, session_id: 's1', run_id: RUN, timestamp: '', seq: ++seq, ...fields }) as EventDictOf<T>;
const fold = (...events: EventDict[]) => foldEvents(RUN, 's1', events);
const texts = (turn: Turn) => turn.blocks.filter((b) => b.kind === 'text').map((b) => (b as { text: string }).text);
const tools = (turn: Turn) => turn.blocks.filter((b): b is ToolBlock => b.kind === 'tool');

beforeEach(() => (seq = 0));

describe('a run folded from its events', () => {
  it('joins streamed text until a tool call, and shows the call with its result', () => {
    const turn = fold(
      ev('run_queued'),
      ev('run_started'),
      ev('text', { content: '**Hel' }),
      ev('text', { content: 'lo**' }),
      ev('tool_call', { tool_name: 'write_file', tool_args: { path: 'a.txt' }, tool_call_id: 'c1' }),
      ev('file_operation', { operation: 'create', path: 'a.txt', diff: '+hi\n', stats: { additions: 1, deletions: 0 } }),
      ev('tool_result', { tool_call_id: 'c1', status: 'success', result: 'ok' }),
      ev('text', { content: 'Done.' }),
      ev('text', { content: '', is_final: true }),
      ev('done', { cancelled: false }),
    );
    expect(texts(turn)).toEqual(['**Hello**', 'Done.']);
    expect(turn.blocks.map((b) => b.kind)).toEqual(['text', 'tool', 'diff', 'text']);
    expect(tools(turn)[0]).toMatchObject({ name: 'write_file', status: 'success', result: 'ok' });
    expect(turn.status).toBe('done');
  });

  it('ignores events it has seen and reports a gap instead of showing text out of order', () => {
    const turn = newTurn(RUN, 's1');
    const first = ev('text', { content: 'a' });
    const second = ev('text', { content: 'b' });
    const third = ev('text', { content: 'c' });
    expect(applyEvent(turn, first)).toBe('applied');
    expect(applyEvent(turn, third)).toBe('gap');
    expect(applyEvent(turn, second)).toBe('applied');
    expect(applyEvent(turn, first)).toBe('duplicate');
    expect(applyEvent(turn, third)).toBe('applied');
    expect(texts(turn)).toEqual(['abc']);
    expect(turn.lastSeq).toBe(3);
  });

  it('continues a turn rebuilt from kept events with the rest of the replay, without repeating any', () => {
    const all = [ev('run_started'), ev('text', { content: 'one ' }), ev('text', { content: 'two ' }), ev('text', { content: 'three' }), ev('done', { cancelled: false })];
    const kept = foldEvents(RUN, 's1', all.slice(0, 3));
    // The gateway replays after last_seq; a replay from 0 would be deduplicated the same way.
    for (const event of all) applyEvent(kept, event);
    expect(texts(kept)).toEqual(['one two three']);
    expect(kept.status).toBe('done');
  });

  it('drops what a lost worker had shown after resume_after_seq, keeping the error notice', () => {
    const turn = fold(ev('run_started'), ev('text', { content: 'kept ' }), ev('text', { content: 'cut mid-' }));
    applyEvent(turn, ev('error', { error: 'The worker was lost', recoverable: true, error_code: 'worker_lost', resume_after_seq: 2 }));
    applyEvent(turn, ev('text', { content: 'redone' }));
    applyEvent(turn, ev('done', { cancelled: false }));
    expect(texts(turn)).toEqual(['kept ', 'redone']);
    expect(turn.blocks.find((b) => b.kind === 'error')).toMatchObject({ continues: true, recoverable: true });
    expect(turn.status).toBe('done');
  });

  it('asks for approval until the call has a result, and the question names its deadline', () => {
    const turn = fold(
      ev('tool_call', { tool_name: 'shell', tool_args: { command: 'ls' }, tool_call_id: 'c7' }),
      ev('hitl_request', { request_id: `${RUN}:c7:abcdef`, action_request: { name: 'shell', args: { command: 'ls' } }, expires_at: '2030-01-01T00:00:00.000Z' }),
    );
    expect(pendingApprovals(turn)).toEqual([expect.objectContaining({ toolCallId: 'c7', expiresAt: '2030-01-01T00:00:00.000Z', action: { name: 'shell', args: { command: 'ls' } } })]);
    expect(tools(turn)[0].awaitingApproval).toBe(true);
    applyEvent(turn, ev('tool_result', { tool_call_id: 'c7', status: 'rejected', result: { error: 'No decision in time' } }));
    expect(pendingApprovals(turn)).toEqual([]);
    expect(tools(turn)[0].status).toBe('rejected');
  });

  it('asks what an MCP server wants to know until it is answered, and keeps how it ended', () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    const turn = fold(
      ev('tool_call', { tool_name: 'booking.book_table', tool_args: {}, tool_call_id: 'c3' }),
      ev('elicitation_request', { request_id: 'e1', tool_call_id: 'c3', server: 'booking', mode: 'form', message: 'Who?', requested_schema: schema, allowed_actions: ['accept', 'decline', 'cancel'], expires_at: '2030-01-01T00:00:00.000Z' }),
    );
    expect(pendingElicitations(turn)).toEqual([{ requestId: 'e1', toolCallId: 'c3', server: 'booking', mode: 'form', message: 'Who?', schema, url: null, expiresAt: '2030-01-01T00:00:00.000Z', answered: false, outcome: null }]);
    expect(tools(turn)[0].awaitingInput).toBe(true);
    applyEvent(turn, ev('elicitation', { request_id: 'e1', action: 'accept', content: { name: 'Ada' } }));
    expect(pendingElicitations(turn)).toEqual([]);
    expect(turn.elicitations[0].outcome).toEqual({ action: 'accept', content: { name: 'Ada' }, reason: null });
    expect(tools(turn)[0].awaitingInput).toBe(false);
  });

  it('closes an unanswered URL question when its call ends or the run stops', () => {
    const call = (at: number) => ev('tool_call', { tool_name: 'acct.verify', tool_args: {}, tool_call_id: 'c4', seq: at });
    const url = (at: number) =>
      ev('elicitation_request', { request_id: 'e2', tool_call_id: 'c4', server: 'acct', mode: 'url', message: 'Verify', url: 'https://example.com/v', allowed_actions: ['accept', 'decline', 'cancel'], expires_at: '2030-01-01T00:00:00.000Z', seq: at });
    const ended = fold(call(1), url(2), ev('tool_result', { tool_call_id: 'c4', status: 'cancelled', result: null, seq: 3 }));
    expect(pendingElicitations(ended)).toEqual([]);
    const stopped = fold(call(1), url(2), ev('done', { cancelled: true, seq: 3 }));
    expect(stopped.elicitations[0]).toMatchObject({ url: 'https://example.com/v', answered: true });
  });

  it('ends a stopped run cancelled, with calls still running cancelled and no question left open', () => {
    const turn = fold(
      ev('tool_call', { tool_name: 'http_request', tool_args: {}, tool_call_id: 'c1' }),
      ev('hitl_request', { request_id: `${RUN}:c1:0`, action_request: { name: 'http_request', args: {} } }),
      ev('done', { cancelled: true }),
    );
    expect(turn.status).toBe('cancelled');
    expect(tools(turn)[0].status).toBe('cancelled');
    expect(pendingApprovals(turn)).toEqual([]);
  });

  it.each(TOOL_RESULT_STATUSES.map((status) => [status]))('keeps a call that ended %s as it ended once the run is done', (status) => {
    const turn = fold(
      ev('tool_call', { tool_name: 'ls', tool_args: {}, tool_call_id: 'c1' }),
      ev('tool_result', { tool_call_id: 'c1', status, result: null }),
      ev('done', { cancelled: false }),
    );
    expect(tools(turn)[0].status).toBe(status);
  });

  it('marks a run with an unrecoverable error failed, and keeps one todo list updated in place', () => {
    const turn = fold(
      ev('todo_update', { todos: [{ content: 'plan', status: 'in_progress' }] }),
      ev('todo_update', { todos: [{ content: 'plan', status: 'completed' }, { content: 'act', status: 'pending' }] }),
      ev('error', { error: 'The model failed', recoverable: false, error_code: 'run_failed' }),
      ev('done', { cancelled: false }),
    );
    expect(turn.blocks.filter((b) => b.kind === 'todos')).toEqual([{ kind: 'todos', todos: [{ content: 'plan', status: 'completed' }, { content: 'act', status: 'pending' }] }]);
    expect(turn.status).toBe('failed');
  });
});

describe("a run's usage", () => {
  const call = (fields: Partial<EventDictOf<'usage'>>) => ev('usage', { model: 'openai:gpt-4o', call: 1, input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, cost: '0.000000000000', currency: 'USD', ...fields });

  it("sums the calls exactly while the run streams, and takes the done's total at the end", () => {
    const turn = fold(
      call({ input_tokens: 1000, output_tokens: 20, cost: '0.000000000001' }),
      call({ call: 2, input_tokens: 1100, output_tokens: 5, cost: '0.002800000002', estimated: true }),
    );
    expect(turn.usage).toEqual({ inputTokens: 2100, outputTokens: 25, cost: '0.002800000003', currency: 'USD', estimated: true });
    expect(usageLine(turn.usage)).toBe('~2,125 tokens · ~0.0028 USD');
    applyEvent(turn, ev('done', { cancelled: false, usage: { input_tokens: 2100, output_tokens: 25, cost: '0.002800000003', currency: 'USD' } }));
    expect(usageLine(turn.usage)).toBe('2,125 tokens · 0.0028 USD');
  });

  it('shows tokens alone for a model without a price, and nothing before any call', () => {
    expect(usageLine(fold(call({ input_tokens: 7, output_tokens: 3, priced: false })).usage)).toBe('10 tokens');
    expect(usageLine(newTurn(RUN, 's1').usage)).toBeNull();
  });
});

describe('history as the chat lists it', () => {
  const message = (id: string, role: string, content: string, run_id: string, metadata: Record<string, unknown> = {}) => ({ message_id: id, session_id: 's1', run_id, role, content, metadata });
  const messages = [
    message('m1', 'user', 'write it', 'r1'),
    message('m2', 'assistant', '', 'r1', { tool_calls: [{ id: 'c1', name: 'write_file', arguments: { path: 'a' } }] }),
    message('m3', 'tool', '{"success":false,"error":"denied"}', 'r1', { name: 'write_file', tool_call_id: 'c1' }),
    message('m4', 'assistant', 'It failed.', 'r1'),
    message('m5', 'user', 'again', 'r2'),
    message('m6', 'assistant', 'partial', 'r2'),
  ];

  it('groups a run’s answers and tool calls into one finished turn after its question', () => {
    const items = historyItems(messages);
    expect(items.map((i) => i.kind)).toEqual(['user', 'turn', 'user', 'turn']);
    const first = items[1] as { kind: 'turn'; turn: Turn };
    expect(first.turn.runId).toBe('r1');
    expect(tools(first.turn)[0]).toMatchObject({ name: 'write_file', status: 'error', result: { success: false, error: 'denied' } });
    expect(texts(first.turn)).toEqual(['It failed.']);
  });

  it('leaves out the answers of runs shown live, but not their questions', () => {
    const items = historyItems(messages, new Set(['r2']));
    expect(items.map((i) => (i.kind === 'user' ? i.text : i.turn.runId))).toEqual(['write it', 'r1', 'again']);
  });
});

describe('small views', () => {
  it('shortens arguments to one line', () => {
    expect(shortArgs({ path: 'notes.txt', content: 'hello\nworld' })).toBe('path: notes.txt, content: hello world');
    expect(shortArgs({ content: 'x'.repeat(200) }, 20)).toHaveLength(20);
  });

  it('tells added, removed and hunk lines of a unified diff apart', () => {
    expect(diffLines('--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n same\n').map((l) => l.kind)).toEqual(['meta', 'meta', 'hunk', 'del', 'add', 'context']);
  });
});
