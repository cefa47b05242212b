import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { formatBytes, McpMessageTooDeepError, McpMessageTooLargeError, refusalOf, refusalResponse, requestIdHint } from './message-limits.js';

describe('message limits', () => {
  it('says a limit the way a person reads it', () => {
    expect(formatBytes(4 * 1024 * 1024)).toBe('4 MiB');
    expect(formatBytes(1536 * 1024)).toBe('1.5 MiB');
    expect(formatBytes(64 * 1024)).toBe('64 KiB');
    expect(formatBytes(1000)).toBe('1000 bytes');
    expect(new McpMessageTooLargeError('files', 4 * 1024 * 1024).message).toBe('MCP server files sent a message of more than 4 MiB (DATAAGENT_MCP_MAX_MESSAGE_BYTES)');
  });

  it('a refusal survives the trip through a JSON-RPC error and the SDK’s McpError', () => {
    for (const refused of [new McpMessageTooLargeError('s', 2048), new McpMessageTooDeepError('s', 100)]) {
      const wire = refusalResponse(7, refused) as { error: { code: number; message: string; data?: unknown } };
      const back = refusalOf('s', new McpError(wire.error.code, wire.error.message, wire.error.data));
      expect(back).toBeInstanceOf(refused.constructor);
      expect(back?.message).toBe(refused.message);
    }
    expect(refusalOf('s', new McpError(ErrorCode.InternalError, 'boom', { other: 1 }))).toBeUndefined();
    expect(refusalOf('s', new Error('boom'))).toBeUndefined();
  });

  it('reads a request id only where nothing else can be mistaken for it', () => {
    expect(requestIdHint('{"jsonrpc":"2.0","id":12,"result":{"content":[{"text":"xx')).toBe(12);
    expect(requestIdHint(' { "id" : "a\\"b" , "jsonrpc":"2.0"')).toBe('a"b');
    expect(requestIdHint('{"result":{"id":3,"content":[')).toBeUndefined();
    expect(requestIdHint('{"jsonrpc":"2.0","id":1')).toBeUndefined();
  });
});
