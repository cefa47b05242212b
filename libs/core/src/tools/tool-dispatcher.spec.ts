import type { Tool } from './tool.js';
import { DuplicateToolError, ToolDispatcher } from './tool-dispatcher.js';

const tool = (name: string, output: string): Tool => ({ name, description: name, parameters: { type: 'object' }, execute: async () => ({ success: true, output }) });

describe('ToolDispatcher', () => {
  it('refuses a second tool with a name already registered instead of replacing the first', async () => {
    const dispatcher = new ToolDispatcher([tool('lookup', 'first')]);
    expect(() => dispatcher.register(tool('lookup', 'second'))).toThrow(DuplicateToolError);
    expect(() => new ToolDispatcher([tool('a', '1'), tool('a', '2')])).toThrow('Two tools are named "a"');
    const ctx = { caller: { tenantId: 't', userId: 'u', role: 'user' as const }, sessionId: 's', runId: 'r', toolCallId: 'c', signal: new AbortController().signal, emit: () => {} };
    expect(await dispatcher.dispatch({ id: 'c', name: 'lookup', arguments: {} }, ctx)).toMatchObject({ success: true, output: 'first' });
  });

  it('finds a tool named server.tool by its wire spelling server__tool too', async () => {
    const dispatcher = new ToolDispatcher([tool('files.read', 'read')]);
    expect(dispatcher.get('files__read')?.name).toBe('files.read');
    const ctx = { caller: { tenantId: 't', userId: 'u', role: 'user' as const }, sessionId: 's', runId: 'r', toolCallId: 'c', signal: new AbortController().signal, emit: () => {} };
    expect(await dispatcher.dispatch({ id: 'c', name: 'files__read', arguments: {} }, ctx)).toMatchObject({ success: true, output: 'read' });
  });
});
