import { ErrorCode, McpError, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/** Bytes one message from an MCP server may have unless DATAAGENT_MCP_MAX_MESSAGE_BYTES says otherwise. */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Levels of nested arrays and objects one message may have. A tool result with more is refused:
 * JSON.stringify, structuredClone and schema validators recurse, and 10,000 levels overflow the
 * stack of whatever touches it first. The envelope (`result.structuredContent`) takes 2 of them.
 */
export const MAX_JSON_DEPTH = 100;

/** What a refused message broke: its size or its nesting. */
export type RefusalReason = 'too_large' | 'too_deep';

/** A message from an MCP server that was refused before anything used it. */
export abstract class McpMessageRefusedError extends Error {
  abstract readonly reason: RefusalReason;

  constructor(
    readonly server: string,
    readonly limit: number,
    message: string,
  ) {
    super(message);
  }
}

/** The server sent a message larger than the cap; it was dropped while it was read, unparsed. */
export class McpMessageTooLargeError extends McpMessageRefusedError {
  readonly reason = 'too_large';

  constructor(server: string, maxBytes: number) {
    super(server, maxBytes, `MCP server ${server} sent a message of more than ${formatBytes(maxBytes)} (DATAAGENT_MCP_MAX_MESSAGE_BYTES)`);
    this.name = 'McpMessageTooLargeError';
  }
}

/** The server sent JSON nested deeper than {@link MAX_JSON_DEPTH}; it was dropped before anything recursed into it. */
export class McpMessageTooDeepError extends McpMessageRefusedError {
  readonly reason = 'too_deep';

  constructor(server: string, maxDepth: number) {
    super(server, maxDepth, `MCP server ${server} sent JSON nested more than ${maxDepth} levels deep`);
    this.name = 'McpMessageTooDeepError';
  }
}

/** Where a refusal travels inside a JSON-RPC error, so the SDK delivers it to the request it ends. */
const REFUSAL_KEY = 'dataagent_refused';

/**
 * The JSON-RPC error response that stands in for a refused answer to request `id`: the SDK's
 * client hands it to that request as an McpError, and {@link refusalOf} turns it back.
 */
export function refusalResponse(id: RequestId, error: McpMessageRefusedError): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: error.message, data: { [REFUSAL_KEY]: error.reason, limit: error.limit } } };
}

/**
 * The refusal an error stands for: itself, or one that came back through the SDK as an
 * McpError made from {@link refusalResponse}; undefined for any other error.
 */
export function refusalOf(server: string, err: unknown): McpMessageRefusedError | undefined {
  if (err instanceof McpMessageRefusedError) return err;
  if (!(err instanceof McpError) || !err.data || typeof err.data !== 'object') return undefined;
  const data = err.data as Record<string, unknown>;
  const limit = typeof data.limit === 'number' ? data.limit : 0;
  if (data[REFUSAL_KEY] === 'too_large') return new McpMessageTooLargeError(server, limit);
  if (data[REFUSAL_KEY] === 'too_deep') return new McpMessageTooDeepError(server, limit);
  return undefined;
}

/** `4 MiB`, `512 KiB` or `1000 bytes`: a limit as a person reads it. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size && bytes % (size / 16) === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}

/**
 * The request id a JSON-RPC message names in its first bytes, when it names one before anything
 * else could be mistaken for it (`{"id":…` or `{"jsonrpc":"2.0","id":…`). Used to tell which
 * request an oversized answer was for without parsing it; servers that put the id last (the
 * TypeScript SDK does) give no hint.
 */
export function requestIdHint(head: string): RequestId | undefined {
  const match = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*[,}]/.exec(head);
  if (!match) return undefined;
  const raw = match[1]!;
  if (!raw.startsWith('"')) return Number(raw);
  try {
    return JSON.parse(raw) as string;
  } catch {
    return undefined;
  }
}
