import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { idColumn, timestampColumn, type JsonObject } from './column-types.js';

/**
 * One tool of an MCP server's catalog, as the worker that connected listed it. The owner is a
 * user for their own servers, `_global/_global` for the operator's. Index names match the migration.
 */
@Entity({ name: 'mcp_tools' })
@Index('uq_mcp_tools_server_tool', ['tenantId', 'userId', 'serverName', 'toolName'], { unique: true })
export class McpToolEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id: string;

  @Column(idColumn('tenant_id', 128))
  tenantId: string;

  @Column(idColumn('user_id', 128))
  userId: string;

  @Column(idColumn('server_name', 64))
  serverName: string;

  @Column(idColumn('tool_name', 128))
  toolName: string;

  @Column({ type: 'text' })
  description: string;

  @Column({ name: 'input_schema', type: 'json' })
  inputSchema: JsonObject;

  @Column({ name: 'output_schema', type: 'json', nullable: true })
  outputSchema: JsonObject | null;

  @Column({ type: 'json', nullable: true })
  annotations: JsonObject | null;

  /** A hash of this tool's input and output schemas. */
  @Column(idColumn('schema_version', 32))
  schemaVersion: string;

  /** A hash of the whole catalog this row was listed in. */
  @Column(idColumn('catalog_version', 32))
  catalogVersion: string;

  /** The listing was cut (limits or an error midway). */
  @Column({ name: 'catalog_partial', type: 'boolean', default: false })
  catalogPartial: boolean;

  @Column(timestampColumn('updated_at'))
  updatedAt: Date;
}
