import { createHash } from 'node:crypto';

/** One tool of a server's catalog, as its tools/list described it. */
export interface McpCatalogTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: { title?: string; readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
}

/** Whose catalog: a user's own server, or an operator's server shared by everyone ({@link GLOBAL_MCP_OWNER}). */
export interface McpCatalogOwner {
  tenantId: string;
  userId: string;
}

/** The owner under which the operator's global servers report their status and catalog. */
export const GLOBAL_MCP_OWNER: McpCatalogOwner = { tenantId: '_global', userId: '_global' };

/** A server's tools as a worker last listed them. */
export interface McpCatalog {
  serverName: string;
  /** A hash of every tool's name and schemas: it changes when the server's tools do. */
  version: string;
  /** The listing was cut (too many pages, tools or bytes, or an error midway). */
  partial: boolean;
  tools: Array<McpCatalogTool & { schemaVersion: string }>;
  updatedAt: Date;
}

/**
 * The tool catalog of each MCP server (`mcp_tools`), written by the workers that connect and
 * read by the API and by whatever needs a tool's schema without a connection.
 */
export interface McpCatalogStore {
  /**
   * Replaces the server's stored tools, unless the stored catalog has this version already.
   * @returns whether anything was written.
   */
  save(owner: McpCatalogOwner, serverName: string, catalog: { version: string; partial: boolean; tools: readonly McpCatalogTool[] }): Promise<boolean>;
  /** The stored catalog, or null when no worker has listed this server's tools (or it has none). */
  get(owner: McpCatalogOwner, serverName: string): Promise<McpCatalog | null>;
  /** Forgets the server's tools (its config was deleted). */
  delete(owner: McpCatalogOwner, serverName: string): Promise<void>;
}

/**
 * A tool's schema version: a hash of its input and output schemas, so a validator compiled for
 * one version is reused until the server changes that tool.
 */
export function toolSchemaVersion(tool: Pick<McpCatalogTool, 'inputSchema' | 'outputSchema'>): string {
  return createHash('sha256')
    .update(stableJson([tool.inputSchema, tool.outputSchema ?? null]))
    .digest('hex')
    .slice(0, 16);
}

/** JSON with object keys sorted, so equal schemas hash equal whatever their key order. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
