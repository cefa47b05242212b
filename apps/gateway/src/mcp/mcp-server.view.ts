import type { McpCatalog } from '#core/mcp/mcp-catalog-store.js';
import { maskSecrets, type McpToolSettings } from '#core/mcp/mcp-config.js';
import type { UserMcpServer } from '#core/mcp/mcp-server-store.js';
import type { McpServerStatus } from '#transport/mcp-status.js';
import type { GlobalMcpServerView, McpCatalogView, McpServerView } from './mcp-server-views.dto.js';

/**
 * A user's server as the API shows it: snake_case, secret values as "***", and its status as the
 * workers last reported it (`unknown` until one has).
 */
export function mcpServerView(server: UserMcpServer, status?: McpServerStatus): McpServerView {
  const c = maskSecrets(server.config);
  return {
    name: c.name,
    transport: c.transport,
    ...(c.command !== undefined ? { command: c.command } : {}),
    ...(c.args !== undefined ? { args: c.args } : {}),
    ...(c.env !== undefined ? { env: c.env } : {}),
    ...(c.cwd !== undefined ? { cwd: c.cwd } : {}),
    ...(c.url !== undefined ? { url: c.url } : {}),
    ...(c.headers !== undefined ? { headers: c.headers } : {}),
    ...(c.timeoutMs !== undefined ? { timeout_ms: c.timeoutMs } : {}),
    disabled: c.disabled ?? false,
    ...(c.description !== undefined ? { description: c.description } : {}),
    ...(c.triggerKeywords !== undefined ? { trigger_keywords: c.triggerKeywords } : {}),
    ...(c.tools !== undefined ? { tools: toolSettingsView(c.tools) } : {}),
    status: status?.status ?? 'unknown',
    last_error: status?.last_error ?? null,
    tool_count: status?.tool_count ?? null,
    last_check: status?.last_check ?? null,
    ...(server.unreadableSecrets ? { unreadable_secrets: server.unreadableSecrets } : {}),
    created_at: server.createdAt.toISOString(),
    updated_at: server.updatedAt.toISOString(),
  };
}

/** An operator's server the user gets, known to the gateway only through the status workers report. */
export function globalServerView(name: string, status: McpServerStatus): GlobalMcpServerView {
  return { name, scope: 'global', status: status.status, last_error: status.last_error, tool_count: status.tool_count, last_check: status.last_check };
}

/** A server's stored catalog: tools named `server.tool`; `version: null` until a worker has listed them. */
export function mcpCatalogView(name: string, scope: 'user' | 'global', catalog: McpCatalog | null): McpCatalogView {
  return {
    server_name: name,
    scope,
    version: catalog?.version ?? null,
    partial: catalog?.partial ?? false,
    updated_at: catalog?.updatedAt.toISOString() ?? null,
    tools: (catalog?.tools ?? []).map((t) => ({
      name: `${name}.${t.name}`,
      description: t.description,
      input_schema: t.inputSchema,
      ...(t.outputSchema ? { output_schema: t.outputSchema } : {}),
      ...(t.annotations ? { annotations: t.annotations } : {}),
      schema_version: t.schemaVersion,
    })),
  };
}

function toolSettingsView(tools: Record<string, McpToolSettings>) {
  return Object.fromEntries(
    Object.entries(tools).map(([name, t]) => [
      name,
      { ...(t.timeoutMs !== undefined ? { timeout_ms: t.timeoutMs } : {}), ...(t.idempotent !== undefined ? { idempotent: t.idempotent } : {}), ...(t.approval !== undefined ? { approval: t.approval } : {}) },
    ]),
  );
}
