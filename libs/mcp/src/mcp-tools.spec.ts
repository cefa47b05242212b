import { fakeToolContext } from '#test/support/fake-tool-context.js';
import type { McpLease } from './mcp-pool.js';
import { mcpTools, renderResult } from './mcp-tools.js';
import { McpMessageTooDeepError, McpMessageTooLargeError } from './message-limits.js';

describe('renderResult', () => {
  it('gives the model text as it is, with structured content beside it, and no event content', () => {
    expect(renderResult({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] })).toEqual({ success: true, output: 'a\nb' });
    expect(renderResult({ content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 } })).toEqual({
      success: true,
      output: { text: '{"n":1}', structured_content: { n: 1 } },
    });
  });

  it('describes images, audio and resources to the model and keeps them whole for the event', () => {
    const content = [
      { type: 'text' as const, text: 'Here:' },
      { type: 'image' as const, data: 'iVBORw0KGgo=', mimeType: 'image/png' },
      { type: 'audio' as const, data: 'AAAA', mimeType: 'audio/wav' },
      { type: 'resource_link' as const, uri: 'file:///r/1', name: 'one', mimeType: 'text/plain' },
      { type: 'resource' as const, resource: { uri: 'file:///r/2', text: 'inline text' } },
      { type: 'resource' as const, resource: { uri: 'file:///r/3', blob: 'AAAAAAAA', mimeType: 'application/octet-stream' } },
    ];
    const result = renderResult({ content });
    expect(result.output).toBe(
      'Here:\n[image image/png, 9 bytes]\n[audio audio/wav, 3 bytes]\n[resource one file:///r/1 (text/plain)]\ninline text\n[resource file:///r/3 (application/octet-stream), 6 bytes]',
    );
    expect(String(result.output)).not.toContain('iVBORw0KGgo=');
    expect(result.content).toEqual(content);
  });

  it('reports a tool error with its text', () => {
    expect(renderResult({ content: [{ type: 'text', text: 'no such row' }], isError: true })).toEqual({ success: false, output: null, error: 'no such row' });
    expect(renderResult({ content: [], isError: true })).toMatchObject({ success: false, error: 'The tool reported an error' });
  });
});

describe('an MCP answer refused for its size or depth', () => {
  /** A read-only tool (so retried on failures that may heal) whose every call fails with `err`. */
  function failingTool(err: Error) {
    let calls = 0;
    const lease = {
      connection: { catalog: { tools: [{ name: 'query', description: 'Runs a query', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }] } },
      callTool: async () => {
        calls++;
        throw err;
      },
      release: () => undefined,
    } as unknown as McpLease;
    const [tool] = mcpTools({ name: 'db', transport: 'stdio', command: 'db-server' }, lease, 5_000);
    return { tool: tool!, calls: () => calls };
  }

  it('too large: a tool error that says so and is not retried', async () => {
    const { tool, calls } = failingTool(new McpMessageTooLargeError('db', 4 * 1024 * 1024));
    const result = await tool.execute({}, fakeToolContext());
    expect(result).toMatchObject({ success: false, output: { retry: false, reason: 'too_large', attempts: 1 } });
    expect(result.error).toBe(
      'MCP server db sent a message of more than 4 MiB (DATAAGENT_MCP_MAX_MESSAGE_BYTES), so the answer of db.query was dropped unread. The same call will fail again: ask for less (a narrower query, fewer rows, one page) or use another tool.',
    );
    expect(calls()).toBe(1);
  });

  it('too deep: invalid output, the server’s fault', async () => {
    const { tool } = failingTool(new McpMessageTooDeepError('db', 100));
    const result = await tool.execute({}, fakeToolContext());
    expect(result).toMatchObject({ success: false, output: { retry: false, reason: 'invalid_output' } });
    expect(result.error).toContain('db.query returned output that cannot be read (MCP server db sent JSON nested more than 100 levels deep)');
  });
});
