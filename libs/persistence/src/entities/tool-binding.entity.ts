import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { idColumn, primaryIdColumn, timestampColumn } from './column-types.js';

/** An allowlist of MCP tools for an assistant or an API key of a tenant. Index names match the migration. */
@Entity({ name: 'mcp_tool_bindings' })
@Index('idx_mcp_tool_bindings_tenant', ['tenantId', 'createdAt'])
export class ToolBindingEntity {
  @PrimaryColumn(primaryIdColumn('binding_id', 36))
  bindingId: string;

  @Column(idColumn('tenant_id', 128))
  tenantId: string;

  @Column(idColumn('agent_id', 128, true))
  agentId: string | null;

  @Column(idColumn('api_key_id', 128, true))
  apiKeyId: string | null;

  /** `server.tool`, `server.*` or `*` patterns. */
  @Column({ type: 'json' })
  tools: string[];

  @Column(timestampColumn('created_at'))
  createdAt: Date;
}
