import { readRunAgentInput } from './run-agent-input.js';

const input = (rest: Record<string, unknown>) => ({ threadId: 't1', runId: 'run-1', tools: [], context: [], forwardedProps: {}, state: {}, ...rest });
const mark = (seq: number, run = 'r1') => ({ dataagent: { run_id: run, seq } });

describe('readRunAgentInput', () => {
  it('takes a last user message as a new turn, with the text before it as history, and the client tools', () => {
    const read = readRunAgentInput(
      input({
        messages: [
          { id: '1', role: 'user', content: 'hi' },
          { id: '2', role: 'assistant', content: 'hello' },
          { id: '3', role: 'user', content: [{ type: 'text', text: 'more ' }, { type: 'text', text: 'please' }] },
        ],
        tools: [{ name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: {} } }],
      }),
    );
    expect(read.request).toEqual({ kind: 'turn', message: 'more please', history: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] });
    expect(read.clientTools).toEqual([{ name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: {} } }]);
  });

  it('takes trailing tool messages the client wrote as its results, and leaves out the assistant\'s own (they carry the log\'s mark)', () => {
    const read = readRunAgentInput(
      input({
        messages: [
          { id: '1', role: 'user', content: 'go' },
          { id: 'a', role: 'assistant', toolCalls: [{ id: 'own', type: 'function', function: { name: 'ls', arguments: '{}' } }, { id: 'k1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
          { id: 'r', role: 'tool', toolCallId: 'own', content: 'files', metadata: mark(7) },
          { id: 'x', role: 'tool', toolCallId: 'k1', content: 'sunny' },
        ],
      }),
    );
    expect(read.request).toEqual({ kind: 'tool_results', toolResults: [{ role: 'tool', toolCallId: 'k1', name: 'get_weather', content: 'sunny' }] });
    expect(() => readRunAgentInput(input({ messages: [{ id: 'a', role: 'assistant', content: 'x' }, { id: 'x', role: 'tool', toolCallId: 'nope', content: 's' }] }))).toThrow(/toolCallId/);
  });

  it('re-attaches when there is no new input, after the highest seq of the latest run the messages carry', () => {
    const read = readRunAgentInput(
      input({
        messages: [
          { id: 'old', role: 'assistant', content: 'before', metadata: mark(40, 'r0') },
          { id: '1', role: 'user', content: 'go' },
          { id: 'a', role: 'assistant', content: 'tok0 tok1 ', metadata: mark(5), toolCalls: [{ id: 'c', type: 'function', function: { name: 'ls', arguments: '{}' }, metadata: mark(9) }] },
        ],
      }),
    );
    expect(read.request).toEqual({ kind: 'reattach', cursor: { runId: 'r1', afterSeq: 9 } });
    // forwardedProps names the cursor outright, even after a user message.
    expect(readRunAgentInput(input({ messages: [{ id: '1', role: 'user', content: 'go' }], forwardedProps: { dataagent: { after_seq: 3 } } })).request).toEqual({ kind: 'reattach', cursor: { runId: '', afterSeq: 3 } });
    expect(readRunAgentInput(input({ messages: [] })).request).toEqual({ kind: 'reattach' });
  });

  it('reads resume entries as approval decisions', () => {
    const read = readRunAgentInput(
      input({
        messages: [{ id: 'a', role: 'assistant', content: 'x', metadata: mark(4) }],
        resume: [
          { interruptId: 'r1:c1:h', status: 'resolved', payload: { approved: true } },
          { interruptId: 'r1:c2:h', status: 'resolved', payload: { approved: false, message: 'no' } },
          { interruptId: 'r1:c3:h', status: 'cancelled' },
          { interruptId: 'r1:c4:h', status: 'resolved', payload: { decision: 'approve_all' } },
        ],
      }),
    );
    expect(read.request).toEqual({
      kind: 'resume',
      cursor: { runId: 'r1', afterSeq: 4 },
      answers: [
        { requestId: 'r1:c1:h', decision: 'approve', message: '' },
        { requestId: 'r1:c2:h', decision: 'reject', message: 'no' },
        { requestId: 'r1:c3:h', decision: 'reject', message: '' },
        { requestId: 'r1:c4:h', decision: 'approve_all', message: '' },
      ],
    });
    expect(() => readRunAgentInput(input({ messages: [], resume: [{ interruptId: 'x', status: 'resolved', payload: 'yes' }] }))).toThrow(/payload/);
  });

  it('refuses a bad thread id or a message list that is not one, naming the field', () => {
    expect(() => readRunAgentInput(input({ threadId: '../x', messages: [] }))).toThrow(expect.objectContaining({ status: 422, errorCode: 'validation_failed' }));
    expect(() => readRunAgentInput(input({ messages: 'hi' }))).toThrow(/messages/);
  });
});
