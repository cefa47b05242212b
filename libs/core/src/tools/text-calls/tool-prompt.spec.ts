import type { ToolSpec } from '../../llm/chat-model.js';
import { splitToolActions } from './streaming-tool-action-detector.js';
import { generateToolPrompt, NO_TOOLS_PROMPT } from './tool-prompt.js';

const vectorSearch: ToolSpec = {
  name: 'vector-search',
  description: 'Searches the knowledge base by meaning.',
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'What to look for' },
      limit: { type: 'integer', description: 'Maximum results', default: 5 },
      mode: { enum: ['fast', 'exact'] },
    },
    required: ['query'],
  },
};

const clock: ToolSpec = { name: 'clock', description: 'Tells the time.', parameters: { type: 'object', properties: {} } };

describe('generateToolPrompt', () => {
  it('lists each tool with its description and parameters', () => {
    const prompt = generateToolPrompt([vectorSearch, clock]);
    expect(prompt).toContain('### vector-search\nSearches the knowledge base by meaning.');
    expect(prompt).toContain('- query (string, required): What to look for');
    expect(prompt).toContain('- limit (integer, optional): Maximum results; default 5');
    expect(prompt).toContain('- mode (enum, optional): one of "fast", "exact"');
    expect(prompt).toContain('### clock\nTells the time.\nParameters:\n- none');
  });

  it('includes an example in the exact tag syntax, which the detector reads as a call', () => {
    const prompt = generateToolPrompt([vectorSearch]);
    expect(prompt).toContain('<tool_action name="vector-search">\n  <query value="..." />\n</tool_action>');
    const calls = splitToolActions(prompt, { newId: () => 'x' })
      .filter((o) => o.type === 'tool_call')
      .map(({ type, call }) => ({ type, call }));
    expect(calls).toEqual([
      { type: 'tool_call', call: { id: 'x', name: 'TOOL_NAME', arguments: { ARGUMENT_NAME: 'ARGUMENT_VALUE' } } },
      { type: 'tool_call', call: { id: 'x', name: 'vector-search', arguments: { query: '...' } } },
    ]);
  });

  it('says plainly that no tools are available, with no example, for an empty list', () => {
    const prompt = generateToolPrompt([]);
    expect(prompt).toBe(NO_TOOLS_PROMPT);
    expect(prompt).toMatch(/no tools are available/i);
    expect(prompt).not.toContain('<tool_action');
  });
});
