import { parseJsonToolCall } from './json-tool-call.js';

const id = () => 'tc_1';

describe('parseJsonToolCall', () => {
  it('reads a JSON reply with a tool call', () => {
    const reply = '{"response": "让我帮你查询天气", "tool_call": {"name": "weather", "arguments": {"city": "北京"}}}';
    expect(parseJsonToolCall(reply, id)).toEqual({
      response: '让我帮你查询天气',
      call: { id: 'tc_1', name: 'weather', arguments: { city: '北京' } },
    });
  });

  it('reads the form inside a ```json fence or a bare ``` fence', () => {
    const json = '{\n  "response": "ok",\n  "tool_call": {"name": "weather", "arguments": {"city": "Paris", "days": 3}}\n}';
    const expected = { response: 'ok', call: { id: 'tc_1', name: 'weather', arguments: { city: 'Paris', days: 3 } } };
    expect(parseJsonToolCall(`\`\`\`json\n${json}\n\`\`\``, id)).toEqual(expected);
    expect(parseJsonToolCall(`  \`\`\`\n${json}\n\`\`\`\n`, id)).toEqual(expected);
  });

  it('reads a plain answer: no tool_call, or tool_call null', () => {
    expect(parseJsonToolCall('{"response": "你好"}', id)).toEqual({ response: '你好', call: null });
    expect(parseJsonToolCall('{"response": "你好", "tool_call": null}', id)).toEqual({ response: '你好', call: null });
  });

  it('accepts arguments given as a JSON string, or missing', () => {
    expect(parseJsonToolCall('{"tool_call": {"name": "w", "arguments": "{\\"city\\": \\"Oslo\\"}"}}', id)).toEqual({
      response: '',
      call: { id: 'tc_1', name: 'w', arguments: { city: 'Oslo' } },
    });
    expect(parseJsonToolCall('{"response": "", "tool_call": {"name": "now"}}', id)?.call?.arguments).toEqual({});
  });

  it('generates a tc_ id by default', () => {
    expect(parseJsonToolCall('{"tool_call": {"name": "now"}}')?.call?.id).toMatch(/^tc_/);
  });

  it.each([
    ['prose', 'The weather is fine.'],
    ['prose around JSON', 'Here: {"response": "x"}'],
    ['other JSON', '{"city": "Paris"}'],
    ['broken JSON', '{"response": "x", '],
    ['an array', '[{"response": "x"}]'],
    ['a non-string response', '{"response": 5}'],
    ['a tool_call without name', '{"response": "x", "tool_call": {"arguments": {}}}'],
    ['arguments that are not an object', '{"tool_call": {"name": "w", "arguments": [1]}}'],
  ])('returns null for %s', (_case, text) => {
    expect(parseJsonToolCall(text, id)).toBeNull();
  });
});
