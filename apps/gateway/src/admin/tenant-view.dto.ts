import { ApiProperty } from '@nestjs/swagger';
import type { TenantFeatures } from '#core/tenants/tenant.js';
import { TenantFeaturesDto } from './tenants.dto.js';

/** A tenant's settings as the API shows them. Each limit: a whole number (0: no limit), or null for the deployment's default. */
export class TenantView {
  @ApiProperty()
  tenant_id: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ type: 'integer', nullable: true })
  max_users: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  max_sessions_per_user: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  max_mcp_servers: number | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Bytes' })
  workspace_quota: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  max_concurrent_runs: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  requests_per_minute: number | null;

  @ApiProperty({ type: TenantFeaturesDto, description: 'A list absent allows all of its kind' })
  features_enabled: TenantFeatures;

  @ApiProperty({ example: 'UTC', description: "Where the tenant's budget days and months start" })
  timezone: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;
}

export class TenantList {
  @ApiProperty({ type: [TenantView] })
  tenants: TenantView[];

  @ApiProperty({ type: 'integer' })
  limit: number;

  @ApiProperty({ type: 'integer' })
  offset: number;
}

export class TenantDeleted {
  @ApiProperty()
  tenant_id: string;

  @ApiProperty({ enum: [true] })
  deleted: true;

  @ApiProperty({ type: 'integer', description: 'Its issued keys, revoked with it' })
  revoked_keys: number;
}
