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

  it('refuses arguments that break the schema, naming each missing or mistyped field, without running the tool', async () => {
    let ran = false;
    const order: Tool = {
      name: 'shop.get_order',
      description: 'an order',
      parameters: {
        type: 'object',
        properties: { orderId: { type: 'string' }, lines: { type: 'array', items: { type: 'object', properties: { qty: { type: 'integer' } }, required: ['qty'] } } },
        required: ['orderId'],
        additionalProperties: false,
      },
      execute: async () => ((ran = true), { success: true, output: 'ok' }),
    };
    const dispatcher = new ToolDispatcher([order]);
    const call = { id: 'c', name: 'shop.get_order', arguments: { lines: [{ qty: 'many' }, {}], coupon: 'x' } };
    const fields = [
      { field: 'orderId', problem: 'is required' },
      { field: 'coupon', problem: 'is not an argument of this tool' },
      { field: 'lines[0].qty', problem: 'must be integer' },
      { field: 'lines[1].qty', problem: 'is required' },
    ];
    expect(dispatcher.check(call)).toEqual(expect.arrayContaining(fields));
    const ctx = { caller: { tenantId: 't', userId: 'u', role: 'user' as const }, sessionId: 's', runId: 'r', toolCallId: 'c', signal: new AbortController().signal, emit: () => {} };
    const result = await dispatcher.dispatch(call, ctx);
    expect(result).toMatchObject({ success: false, status: 'error', output: { error_code: 'invalid_arguments', invalid_arguments: expect.arrayContaining(fields) } });
    expect(result.error).toContain('Invalid arguments for shop.get_order: ');
    expect(result.error).toContain('orderId is required');
    expect(ran).toBe(false);
    expect(dispatcher.check({ id: 'c', name: 'shop.get_order', arguments: { orderId: 'A-1' } })).toBeNull();
  });

  it('holds a tool’s timeout while the person answers its question, and runs it again after', async () => {
    const asking = (thenMs: number): Tool => ({
      name: 'ask',
      description: 'asks, then works',
      parameters: { type: 'object' },
      timeoutMs: 100,
      execute: async (_args, ctx) => {
        const answer = await ctx.elicit!({ server: 's', mode: 'url', message: 'Open it', url: 'https://example.com/' }, ctx.signal);
        await new Promise((r) => setTimeout(r, thenMs));
        return { success: true, output: answer.action };
      },
    });
    // The person takes 300 ms, three times the tool's timeout.
    const elicit = () => new Promise<{ action: 'accept' }>((resolve) => setTimeout(() => resolve({ action: 'accept' }), 300));
    const ctx = { caller: { tenantId: 't', userId: 'u', role: 'user' as const }, sessionId: 's', runId: 'r', toolCallId: 'c', signal: new AbortController().signal, emit: () => {}, elicit };
    expect(await new ToolDispatcher([asking(10)]).dispatch({ id: 'c', name: 'ask', arguments: {} }, ctx)).toMatchObject({ success: true, output: 'accept' });
    // After the answer its time runs again: work past it still times out.
    expect(await new ToolDispatcher([asking(400)]).dispatch({ id: 'c', name: 'ask', arguments: {} }, ctx)).toMatchObject({ success: false, status: 'timeout' });
  });
});
