import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { idColumn, timestampColumn, type JsonObject } from './column-types.js';

/**
 * A user's own MCP server. `config` is the McpServerConfig with its env and header values
 * encrypted (see mcp-secrets.ts). Index names match the migration.
 */
@Entity({ name: 'mcp_servers' })
@Index('uq_mcp_servers_user_name', ['tenantId', 'userId', 'name'], { unique: true })
export class McpServerEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id: string;

  @Column(idColumn('tenant_id', 128))
  tenantId: string;

  @Column(idColumn('user_id', 128))
  userId: string;

  /** Compared byte for byte, like ids: "GitHub" and "github" are two servers. */
  @Column(idColumn('name', 64))
  name: string;

  @Column({ type: 'json' })
  config: JsonObject;

  @Column(timestampColumn('created_at'))
  createdAt: Date;

  @Column(timestampColumn('updated_at'))
  updatedAt: Date;
}
