import { toolSchemaVersion, type McpCatalog, type McpCatalogOwner, type McpCatalogStore, type McpCatalogTool } from './mcp-catalog-store.js';

/** MCP tool catalogs in memory, for one process and the store contract tests. */
export class MemoryMcpCatalogStore implements McpCatalogStore {
  private readonly catalogs = new Map<string, McpCatalog>();

  constructor(private readonly now: () => Date = () => new Date()) {}

  async save(owner: McpCatalogOwner, serverName: string, catalog: { version: string; partial: boolean; tools: readonly McpCatalogTool[] }): Promise<boolean> {
    const key = keyOf(owner, serverName);
    if (this.catalogs.get(key)?.version === catalog.version) return false;
    const tools = catalog.tools.map((t) => structuredClone({ ...t, schemaVersion: toolSchemaVersion(t) }));
    this.catalogs.set(key, { serverName, version: catalog.version, partial: catalog.partial, tools, updatedAt: this.now() });
    return true;
  }

  async get(owner: McpCatalogOwner, serverName: string): Promise<McpCatalog | null> {
    const found = this.catalogs.get(keyOf(owner, serverName));
    return found ? structuredClone(found) : null;
  }

  async delete(owner: McpCatalogOwner, serverName: string): Promise<void> {
    this.catalogs.delete(keyOf(owner, serverName));
  }
}

function keyOf(owner: McpCatalogOwner, serverName: string): string {
  return JSON.stringify([owner.tenantId, owner.userId, serverName]);
}
