import { ApiError } from '../common/api-error.js';
import { parseClientTools, parseMessages, wireArguments } from './openai-wire.js';

const call = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } });

describe('parseMessages', () => {
  it('ends at the last user message, with the conversation before it, tool exchanges included', () => {
    const parsed = parseMessages([
      { role: 'developer', content: 'be brief' },
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, tool_calls: [call('c1', 'get_weather', '{"city":"Oslo"}')] },
      { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'sunny' }] },
      { role: 'assistant', content: 'Sunny.' },
      { role: 'user', content: 'thanks' },
    ]);
    expect(parsed).toEqual({
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

  it('continues from the tool results that end the conversation, instead of a user message', () => {
    const parsed = parseMessages([
      { role: 'user', content: 'weather in two cities?' },
      { role: 'assistant', content: 'Checking.', tool_calls: [call('c1', 'get_weather', '{"city":"Oslo"}'), call('c2', 'get_weather', 'not json')] },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      { role: 'tool', tool_call_id: 'c2', content: 'rain' },
    ]);
    expect(parsed.message).toBe('');
    expect(parsed.history.at(-1)).toEqual({ role: 'assistant', content: 'Checking.', toolCalls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Oslo' } }, { id: 'c2', name: 'get_weather', arguments: { _raw: 'not json' } }] });
    expect(parsed.toolResults).toEqual([
      { role: 'tool', toolCallId: 'c1', name: 'get_weather', content: 'sunny' },
      { role: 'tool', toolCallId: 'c2', name: 'get_weather', content: 'rain' },
    ]);
    expect(wireArguments(parsed.history.at(-1)!.toolCalls![1]!.arguments)).toBe('not json');
  });

  it('refuses by position a tool message that answers no call before it, and the deprecated function role', () => {
    const refusal = (messages: unknown[]) => {
      try {
        parseMessages(messages);
      } catch (err) {
        return err instanceof ApiError ? { status: err.status, fields: Object.keys((err.details as { fields: object }).fields) } : err;
      }
      return 'accepted';
    };
    expect(refusal([{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'c1', content: 'x' }])).toEqual({ status: 400, fields: ['messages[1].tool_call_id'] });
    expect(refusal([{ role: 'assistant', content: null, tool_calls: [call('c1', 'f', '{}')] }, { role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'c1', content: 'x' }])).toEqual({ status: 400, fields: ['messages[2].tool_call_id'] });
    expect(refusal([{ role: 'function', name: 'f', content: 'x' }, { role: 'user', content: 'hi' }])).toEqual({ status: 400, fields: ['messages[0].role'] });
    expect(refusal([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }])).toEqual({ status: 400, fields: ['messages'] });
  });
});

describe('parseClientTools', () => {
  it('takes function tools, with empty parameters when none are given', () => {
    expect(parseClientTools([{ type: 'function', function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }, { type: 'function', function: { name: 'now' } }], 'auto')).toEqual([
      { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      { name: 'now', description: '', parameters: { type: 'object', properties: {} } },
    ]);
    expect(parseClientTools(undefined, undefined)).toEqual([]);
  });

  it.each([
    [[{ type: 'custom', custom: { name: 'x' } }], undefined, 'tools[0].type'],
    [[{ type: 'function', function: { name: 'server.tool' } }], undefined, 'tools[0].function.name'],
    [[{ type: 'function', function: { name: 'f' } }, { type: 'function', function: { name: 'f' } }], undefined, 'tools[1].function.name'],
    [[{ type: 'function', function: { name: 'f', parameters: 'none' } }], undefined, 'tools[0].function.parameters'],
    [[{ type: 'function', function: { name: 'f' } }], 'required', 'tool_choice'],
    [[{ type: 'function', function: { name: 'f' } }], { type: 'function', function: { name: 'f' } }, 'tool_choice'],
  ])('refuses %j (tool_choice %j) naming %s', (tools, choice, field) => {
    expect(() => parseClientTools(tools, choice)).toThrow(expect.objectContaining({ status: 400, details: { fields: { [field]: expect.any(Array) } } }));
  });
});
