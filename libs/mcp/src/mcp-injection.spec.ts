import type { ModelCallState } from '#core/engine/agent-middleware.js';
import type { ToolSpec } from '#core/llm/chat-model.js';
import { mcpInjection } from './mcp-injection.js';

const spec = (name: string, description: string, properties: Record<string, unknown> = {}, required: string[] = []): ToolSpec => ({
  name,
  description,
  parameters: { type: 'object', properties, required },
});
const builtin = spec('read_file', 'Reads a file of the workspace.', { path: { type: 'string' } });
const weather = [
  spec('weather.get_current', 'Current weather for a city. Uses the national service.', { city: { type: 'string', description: 'City name' } }, ['city']),
  spec('weather.get_forecast', 'Forecast for the next days.', { city: { type: 'string' }, days: { type: 'integer' } }, ['city']),
];
const jira = [spec('jira.get_ticket', 'A ticket by key.', { key: { type: 'string' } }, ['key'])];
const specs = new Map([...weather, ...jira].map((s) => [s.name, s]));
const servers = [
  { name: 'weather', triggerKeywords: ['天气', 'forecast'], tools: ['get_current', 'get_forecast'] },
  { name: 'jira', tools: ['get_ticket'] },
];

function state(user: string, extra: ModelCallState['messages'] = []): ModelCallState {
  return { sessionId: 's', runId: 'r', iteration: 0, messages: [{ role: 'system', content: 'SYS' }, { role: 'user', content: user }, ...extra], tools: [builtin, ...specs.values()] };
}

describe('mcpInjection', () => {
  it('offers no MCP tool, and says nothing of them, when the message has no MCP intent', async () => {
    const s = state('hello there');
    await mcpInjection({ servers, specs, textTools: false }).beforeModel!(s);
    expect(s.tools).toEqual([builtin]);
    expect(s.messages[0]!.content).toBe('SYS');
  });

  it("offers a keyword's server with full schemas to a native model, and Level 2 lines to tell its tools apart", async () => {
    const s = state('明天北京天气怎么样？');
    await mcpInjection({ servers, specs, textTools: false }).beforeModel!(s);
    expect(s.tools).toEqual([builtin, ...weather]);
    expect(s.messages[0]!.content).toBe(
      [
        'SYS',
        '',
        'MCP tools for this request:',
        '{"name":"weather.get_current","description":"Current weather for a city","params":["city*: string (City name)"]}',
        '{"name":"weather.get_forecast","description":"Forecast for the next days","params":["city*: string","days: integer"]}',
      ].join('\n'),
    );
  });

  it('gives one explicitly called tool a Level 1 line, and a text-format model no schema until it asks', async () => {
    const s = state('use the jira tool for PROJ-1');
    await mcpInjection({ servers, specs, textTools: true }).beforeModel!(s);
    expect(s.tools).toEqual([builtin, { ...jira[0]!, parameters: { type: 'object' } }]);
    expect(s.messages[0]!.content).toBe('SYS\n\nMCP tools for this request:\n[tool] jira.get_ticket: A ticket by key');
  });

  it('keeps a tool the model has called in this run offered, in either spelling', async () => {
    const injection = mcpInjection({ servers, specs, textTools: false });
    const called = state('hello', [{ role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'jira__get_ticket', arguments: { key: 'P-1' } }] }]);
    await injection.beforeModel!(called);
    expect(called.tools.map((t) => t.name)).toEqual(['read_file', 'jira.get_ticket']);
  });

  it('asks Layer 2 only about messages the rules leave unsure, and offers the servers it names', async () => {
    const asked: string[] = [];
    const classifier = async (message: string) => (asked.push(message), ['jira']);
    const unsure = state('帮我看一下 PROJ-7 现在什么情况');
    await mcpInjection({ servers, specs, textTools: false, classifier }).beforeModel!(unsure);
    expect(unsure.tools.map((t) => t.name)).toEqual(['read_file', 'jira.get_ticket']);
    const plain = state('hello there');
    await mcpInjection({ servers, specs, textTools: false, classifier }).beforeModel!(plain);
    const keyword = state('明天天气如何');
    await mcpInjection({ servers, specs, textTools: false, classifier }).beforeModel!(keyword);
    expect(asked).toEqual(['帮我看一下 PROJ-7 现在什么情况']);
    expect(plain.tools).toEqual([builtin]);
  });
});
