import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MessageGuard } from './message-guard.js';
import { McpMessageTooLargeError } from './message-limits.js';

/** A transport that records what it sends and lets the test play the server. */
class FakeTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  sent: JSONRPCMessage[] = [];
  async start() {}
  async send(message: JSONRPCMessage) {
    this.sent.push(message);
  }
  async close() {
    this.onclose?.();
  }
}

function guarded() {
  const inner = new FakeTransport();
  const guard = new MessageGuard(inner, { server: 'srv', maxDepth: 100 });
  const received: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  guard.onmessage = (m) => received.push(m);
  guard.onerror = (e) => errors.push(e);
  const request = (id: number) => guard.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 't' } });
  return { inner, guard, received, errors, request };
}

const deep = (levels: number) => JSON.parse(`${'{"a":'.repeat(levels)}0${'}'.repeat(levels)}`) as Record<string, unknown>;
const refusedIds = (messages: JSONRPCMessage[]) => messages.filter((m) => 'error' in m && (m.error.data as { dataagent_refused?: string })?.dataagent_refused).map((m) => (m as { id: number }).id);

describe('MessageGuard', () => {
  it('passes messages within the limits through, both ways', async () => {
    const { inner, received, request } = guarded();
    await request(1);
    expect(inner.sent).toHaveLength(1);
    inner.onmessage!({ jsonrpc: '2.0', id: 1, result: { content: [], structuredContent: deep(50) } });
    expect(received).toHaveLength(1);
  });

  it('turns an answer nested too deep into an error for its request, before the client touches it', async () => {
    const { inner, received, errors, request } = guarded();
    await request(1);
    inner.onmessage!({ jsonrpc: '2.0', id: 1, result: { content: [], structuredContent: deep(10_000) } });
    expect(received).toEqual([
      { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'MCP server srv sent JSON nested more than 100 levels deep', data: { dataagent_refused: 'too_deep', limit: 100 } } },
    ]);
    expect(errors.map((e) => e.name)).toEqual(['McpMessageTooDeepError']);
    // A deep notification (nobody waits for it) is only reported.
    inner.onmessage!({ jsonrpc: '2.0', method: 'notifications/message', params: deep(10_000) });
    expect(received).toHaveLength(1);
    expect(errors).toHaveLength(2);
  });

  it('fails the request an oversized answer named, or every waiting one when it named none', async () => {
    const { guard, received, request } = guarded();
    await Promise.all([request(1), request(2), request(3)]);
    guard.refuseOversized(new McpMessageTooLargeError('srv', 1024), '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"xxxx');
    expect(refusedIds(received)).toEqual([2]);
    guard.refuseOversized(new McpMessageTooLargeError('srv', 1024), '{"result":{"content":[{"type":"text","text":"xxxx');
    expect(refusedIds(received)).toEqual([2, 1, 3]);
  });

  it('forgets requests that were answered, cancelled or never sent', async () => {
    const { inner, guard, received, request } = guarded();
    await Promise.all([request(1), request(2)]);
    inner.onmessage!({ jsonrpc: '2.0', id: 1, result: {} });
    await guard.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } });
    inner.send = async () => {
      throw new Error('down');
    };
    await expect(request(3)).rejects.toThrow('down');
    guard.refuseOversized(new McpMessageTooLargeError('srv', 1024), '');
    expect(refusedIds(received)).toEqual([]);
  });
});
