import { ApiError } from '../../common/api-error.js';
import { parseInput, parseResponseTools } from './response-input.js';

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    return err instanceof ApiError ? { status: err.status, code: err.errorCode, fields: Object.keys((err.details as { fields: object }).fields) } : err;
  }
  return 'accepted';
};

describe('parseInput', () => {
  it('takes a string, or messages with text parts: the last user message is the input, the ones before it the history', () => {
    expect(parseInput('hi', false)).toEqual({ kind: 'message', history: [], message: 'hi' });
    expect(
      parseInput(
        [
          { role: 'developer', content: 'be brief' },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'weather?' }] },
          { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
          { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
          { role: 'assistant', content: [{ type: 'output_text', text: 'Sunny.' }] },
          { role: 'user', content: 'thanks' },
        ],
        false,
      ),
    ).toEqual({
      kind: 'message',
      message: 'thanks',
      history: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Oslo' } }] },
        { role: 'tool', toolCallId: 'c1', name: 'get_weather', content: 'sunny' },
        { role: 'assistant', content: 'Sunny.' },
      ],
    });
  });

  it('with previous_response_id, takes the outputs of its calls, or the answers to its approval requests, or new messages only', () => {
    expect(parseInput([{ type: 'function_call_output', call_id: 'c1', output: '{"sky":"sunny"}' }], true)).toEqual({ kind: 'tool_outputs', outputs: [{ callId: 'c1', output: '{"sky":"sunny"}' }] });
    expect(parseInput([{ type: 'mcp_approval_response', approval_request_id: 'r:c:h', approve: false, reason: 'no' }], true)).toEqual({ kind: 'approvals', approvals: [{ requestId: 'r:c:h', approve: false, reason: 'no' }] });
    expect(refusal(() => parseInput([{ role: 'user', content: 'earlier' }, { role: 'assistant', content: 'yes' }, { role: 'user', content: 'now' }], true))).toEqual({ status: 400, code: 'invalid_request', fields: ['input'] });
  });

  it.each([
    [[], false, 'input'],
    ['  ', false, 'input'],
    [[{ type: 'mcp_approval_response', approval_request_id: 'r', approve: true }], false, 'previous_response_id'],
    [[{ type: 'mcp_approval_response', approval_request_id: 'r', approve: true }, { role: 'user', content: 'hi' }], true, 'input[1].type'],
    [[{ type: 'mcp_approval_response', approval_request_id: 'r' }], true, 'input[0]'],
    [[{ role: 'user', content: [{ type: 'input_image', image_url: 'x' }] }], false, 'input[0].content'],
    [[{ type: 'item_reference', id: 'x' }], false, 'input[0].type'],
    [[{ role: 'assistant', content: 'no question' }], false, 'input'],
  ])('refuses %j (continuing: %s) naming %s', (input, continues, field) => {
    expect(refusal(() => parseInput(input, continues))).toMatchObject({ status: 400, fields: [field] });
  });
});

describe('parseResponseTools', () => {
  it("takes flat function tools, and refuses the hosted tools and a clash by the field's name", () => {
    expect(parseResponseTools([{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: true }], 'auto')).toEqual([{ name: 'get_weather', description: '', parameters: { type: 'object', properties: {} } }]);
    expect(refusal(() => parseResponseTools([{ type: 'web_search' }], undefined))).toMatchObject({ status: 400, code: 'unsupported_parameter', fields: ['tools[0].type'] });
    expect(refusal(() => parseResponseTools([{ type: 'function', name: 'a.b' }], undefined))).toMatchObject({ status: 400, fields: ['tools[0].name'] });
    expect(refusal(() => parseResponseTools([{ type: 'function', name: 'f' }], 'required'))).toMatchObject({ status: 400, fields: ['tool_choice'] });
  });
});
