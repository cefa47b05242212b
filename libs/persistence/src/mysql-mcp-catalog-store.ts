import type { DataSource } from 'typeorm';
import { toolSchemaVersion, type McpCatalog, type McpCatalogOwner, type McpCatalogStore, type McpCatalogTool } from '#core/mcp/mcp-catalog-store.js';
import type { JsonObject } from './entities/column-types.js';
import { McpToolEntity } from './entities/mcp-tool.entity.js';
import { retryConflicts } from './retry-conflicts.js';

/**
 * MCP tool catalogs in `mcp_tools`. A save replaces a server's rows in one transaction, and
 * only when the catalog's version changed, so workers reconnecting to an unchanged server write
 * nothing.
 */
export class MysqlMcpCatalogStore implements McpCatalogStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly now: () => Date,
  ) {}

  async save(owner: McpCatalogOwner, serverName: string, catalog: { version: string; partial: boolean; tools: readonly McpCatalogTool[] }): Promise<boolean> {
    const where = { tenantId: owner.tenantId, userId: owner.userId, serverName };
    const stored = await this.dataSource.getRepository(McpToolEntity).findOne({ where, select: { catalogVersion: true } });
    if (stored?.catalogVersion === catalog.version) return false;
    const at = this.now();
    const rows = catalog.tools.map(
      (tool): Omit<McpToolEntity, 'id'> => ({
        ...where,
        toolName: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema as JsonObject,
        outputSchema: (tool.outputSchema as JsonObject | undefined) ?? null,
        annotations: (tool.annotations as JsonObject | undefined) ?? null,
        schemaVersion: toolSchemaVersion(tool),
        catalogVersion: catalog.version,
        catalogPartial: catalog.partial,
        updatedAt: at,
      }),
    );
    try {
      // Saves of other servers lock neighbouring ranges of the index and can deadlock with this
      // one: the victim runs again, or its catalog would never land.
      await retryConflicts(() =>
        this.dataSource.transaction(async (manager) => {
          // A first save deletes nothing: no delete is sent, so it takes no range locks to wait on.
          if (stored) await manager.delete(McpToolEntity, where);
          // Chunks keep one statement well under max_allowed_packet for a large catalog.
          for (let i = 0; i < rows.length; i += 100) await manager.insert(McpToolEntity, rows.slice(i, i + 100));
        }),
      );
    } catch (err) {
      // Two workers listed the server at once: the other's rows stand (they describe the same
      // server; a later change is saved by whoever lists it next).
      if (isDuplicate(err)) return false;
      throw err;
    }
    return true;
  }

  async get(owner: McpCatalogOwner, serverName: string): Promise<McpCatalog | null> {
    const rows = await this.dataSource.getRepository(McpToolEntity).find({
      where: { tenantId: owner.tenantId, userId: owner.userId, serverName },
      order: { id: 'ASC' },
    });
    if (rows.length === 0) return null;
    return {
      serverName,
      version: rows[0]!.catalogVersion,
      partial: rows[0]!.catalogPartial,
      updatedAt: rows[0]!.updatedAt,
      tools: rows.map((row) => ({
        name: row.toolName,
        description: row.description,
        inputSchema: row.inputSchema,
        ...(row.outputSchema ? { outputSchema: row.outputSchema } : {}),
        ...(row.annotations ? { annotations: row.annotations } : {}),
        schemaVersion: row.schemaVersion,
      })),
    };
  }

  async delete(owner: McpCatalogOwner, serverName: string): Promise<void> {
    await this.dataSource.getRepository(McpToolEntity).delete({ tenantId: owner.tenantId, userId: owner.userId, serverName });
  }
}

function isDuplicate(err: unknown): boolean {
  const e = err as { code?: unknown; driverError?: { code?: unknown } };
  return (e?.code ?? e?.driverError?.code) === 'ER_DUP_ENTRY';
}
