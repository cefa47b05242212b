import { Column, Entity, PrimaryColumn } from 'typeorm';
import { idColumn, primaryIdColumn, timestampColumn, type JsonObject } from './column-types.js';

/** A tenant's settings; a null limit takes the deployment's default. Names match the migration. */
@Entity({ name: 'tenants' })
export class TenantEntity {
  @PrimaryColumn(primaryIdColumn('tenant_id', 128))
  tenantId: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ name: 'max_users', type: 'int', nullable: true })
  maxUsers: number | null;

  @Column({ name: 'max_sessions_per_user', type: 'int', nullable: true })
  maxSessionsPerUser: number | null;

  @Column({ name: 'max_mcp_servers', type: 'int', nullable: true })
  maxMcpServers: number | null;

  /** Bytes; bigint comes back from mysql2 as a string, hence the transformer. */
  @Column({ name: 'workspace_quota', type: 'bigint', nullable: true, transformer: { to: (v: number | null) => v, from: (v: string | null) => (v === null ? null : Number(v)) } })
  workspaceQuotaBytes: number | null;

  @Column({ name: 'max_concurrent_runs', type: 'int', nullable: true })
  maxConcurrentRuns: number | null;

  @Column({ name: 'requests_per_minute', type: 'int', nullable: true })
  requestsPerMinute: number | null;

  /** An IANA time zone: where the tenant's budget days and months start. */
  @Column({ name: 'timezone', type: 'varchar', length: 64, default: 'UTC' })
  timeZone: string;

  @Column({ name: 'features_enabled', type: 'json' })
  features: JsonObject;

  @Column(timestampColumn('created_at'))
  createdAt: Date;

  @Column(timestampColumn('updated_at'))
  updatedAt: Date;
}
