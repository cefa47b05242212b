import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import type { Tool, ToolResult } from '#core/tools/tool.js';
import { McpUnavailableError, type McpToolEntry } from './mcp-connection.js';
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
    // The call ends itself at `timeoutMs` (and cancels it on the server); the dispatcher's own limit is a backstop.
    timeoutMs: timeoutMs + 1_000,
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
  if (result.isError) return { success: false, output: null, error: text || 'The tool reported an error' };
  const structured = result.structuredContent;
  return { success: true, output: structured === undefined ? text : { text, structured_content: structured } };
}

function failure(server: string, tool: string, err: unknown, timeoutMs: number): ToolResult {
  const name = qualifiedToolName(server, tool);
  if (err instanceof McpUnavailableError) {
    return { success: false, output: { retry: err.retryable }, error: `${err.message}. ${err.retryable ? 'Trying again later may work.' : 'Trying again will not help until its configuration is fixed.'}` };
  }
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) {
      return { success: false, output: { retry: true }, error: `${name} did not answer within ${timeoutMs} ms; the call was cancelled. Trying again may work.`, status: 'timeout' };
    }
    if (err.code === ErrorCode.ConnectionClosed) {
      return { success: false, output: { retry: true }, error: `The ${server} server stopped during the call to ${name}; whether it took effect is unknown. Check before trying again.` };
    }
    if (/output schema/i.test(err.message)) {
      return { success: false, output: { retry: false }, error: `${name} returned output that breaks its own output schema (${err.message}). The server is at fault; trying again will not help.` };
    }
    return { success: false, output: { retry: false }, error: `${name} failed: ${err.message}` };
  }
  return { success: false, output: { retry: true }, error: `${name} failed: ${err instanceof Error ? err.message : String(err)}` };
}
