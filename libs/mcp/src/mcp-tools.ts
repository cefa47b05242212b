import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import type { Tool, ToolResult } from '#core/tools/tool.js';
import { HttpConnectionError } from './dropped-stream-fetch.js';
import { McpUnavailableError, PROGRESS_MAX_FACTOR, type McpToolEntry } from './mcp-connection.js';
import type { McpLease } from './mcp-pool.js';

/** A tool's name in events, the audit and the API: `server.tool`. */
export function qualifiedToolName(server: string, tool: string): string {
  return `${server}.${tool}`;
}

/**
 * The tools one server offers a run, named `server.tool` so two servers never clash, called
 * through the run's lease on the pool. Failures come back to the model as readable results that
 * say whether a retry makes sense; the conversation goes on.
 */
export function mcpTools(server: McpServerConfig, lease: McpLease, defaultTimeoutMs: number): Tool[] {
  return lease.connection.catalog.tools.map((entry) => mcpTool(server, entry, lease, server.timeoutMs ?? defaultTimeoutMs));
}

function mcpTool(server: McpServerConfig, entry: McpToolEntry, lease: McpLease, timeoutMs: number): Tool {
  const { $schema: _dialect, ...schema } = entry.inputSchema;
  const about = server.description ? ` (from ${server.name}: ${server.description})` : ` (from the ${server.name} MCP server)`;
  return {
    name: qualifiedToolName(server.name, entry.name),
    description: `${entry.description}${about}`,
    parameters: { type: 'object', ...schema },
    readOnly: entry.annotations?.readOnlyHint === true,
    idempotent: entry.annotations?.idempotentHint === true,
    // The call ends itself at `timeoutMs` without progress, or at the hard maximum with it (and
    // cancels it on the server); the dispatcher's own limit is a backstop past the maximum.
    timeoutMs: timeoutMs * PROGRESS_MAX_FACTOR + 1_000,
    async execute(args, ctx): Promise<ToolResult> {
      try {
        return renderResult(await lease.callTool(entry.name, args, { signal: ctx.signal, timeoutMs }));
      } catch (err) {
        return failure(server.name, entry.name, err, timeoutMs);
      }
    },
  };
}

/**
 * A tool result for the model: text as it is, structured content as JSON beside it, images,
 * audio and resources described by kind, size and address (their bytes stay out of the prompt).
 * When there are such blocks, the MCP content goes whole into `content`, for the event.
 */
export function renderResult(result: CallToolResult): ToolResult {
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    if (item.type === 'text') parts.push(item.text);
    else if (item.type === 'image' || item.type === 'audio') parts.push(`[${item.type} ${item.mimeType}, ${Math.floor((item.data.length * 3) / 4)} bytes]`);
    else if (item.type === 'resource_link') parts.push(`[resource ${item.name ? `${item.name} ` : ''}${item.uri}${item.mimeType ? ` (${item.mimeType})` : ''}]`);
    else if (item.type === 'resource') {
      const r = item.resource as { uri: string; mimeType?: string; text?: string; blob?: string };
      parts.push(typeof r.text === 'string' ? r.text : `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}, ${Math.floor(((r.blob ?? '').length * 3) / 4)} bytes]`);
    }
  }
  const text = parts.join('\n');
  // Images, audio and resources reach clients whole, in the event; the model gets their description.
  const whole = (result.content ?? []).some((item) => item.type !== 'text') ? { content: result.content } : {};
  if (result.isError) return { success: false, output: null, error: text || 'The tool reported an error', ...whole };
  const structured = result.structuredContent;
  return { success: true, output: structured === undefined ? text : { text, structured_content: structured }, ...whole };
}

/** A failed call as the model sees it: what happened, and whether trying again makes sense. */
function failure(server: string, tool: string, err: unknown, timeoutMs: number): ToolResult {
  const name = qualifiedToolName(server, tool);
  const fail = (error: string, retry: boolean, status?: ToolResult['status']): ToolResult => ({ success: false, output: { retry }, error, ...(status ? { status } : {}) });
  if (err instanceof McpUnavailableError) {
    return fail(`${err.message}. ${err.retryable ? 'Trying again later may work.' : 'Trying again will not help until its configuration is fixed.'}`, err.retryable);
  }
  if (err instanceof StreamableHTTPError && (err.code === 401 || err.code === 403)) {
    return fail(`The ${server} server refused the call to ${name} (HTTP ${err.code}: not authorized). Trying again will not help until its credentials are fixed.`, false);
  }
  if (err instanceof HttpConnectionError && err.unreachable) {
    return fail(`The ${server} server could not be reached for ${name} (${err.message}); the call did not run. Trying again later may work.`, true);
  }
  if (err instanceof HttpConnectionError || (err instanceof McpError && err.code === ErrorCode.ConnectionClosed)) {
    const detail = err.message.replace(/^MCP error -?\d+: /, '');
    return fail(`The ${server} server went away during the call to ${name} (${detail}); whether it took effect is unknown. Check before trying again; the next call reconnects.`, true);
  }
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) {
      return fail(`${name} did not answer within ${timeoutMs} ms; the call was cancelled. Trying again may work.`, true, 'timeout');
    }
    if (/output schema/i.test(err.message)) {
      return fail(`${name} returned output that breaks its own output schema (${err.message}). The server is at fault; trying again will not help.`, false);
    }
    return fail(`${name} failed: ${err.message}. Trying again with the same arguments will not help.`, false);
  }
  return fail(`${name} failed: ${err instanceof Error ? err.message : String(err)}. Trying again may work.`, true);
}
