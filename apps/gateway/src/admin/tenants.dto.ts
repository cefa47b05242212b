import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';

const NAME_LIST = { each: true, message: 'each entry must be 1-128 characters without white space' } as const;

/** Which built-in tools, skills and MCP servers the tenant may use; a list absent allows all of its kind. */
export class TenantFeaturesDto {
  @ApiPropertyOptional({ type: [String], description: 'Built-in tools' })
  @IsOptional() @IsArray() @ArrayMaxSize(500) @IsString({ each: true }) @Matches(/^\S{1,128}$/, NAME_LIST)
  tools?: string[];

  @ApiPropertyOptional({ type: [String] })
  @IsOptional() @IsArray() @ArrayMaxSize(500) @IsString({ each: true }) @Matches(/^\S{1,128}$/, NAME_LIST)
  skills?: string[];

  @ApiPropertyOptional({ type: [String] })
  @IsOptional() @IsArray() @ArrayMaxSize(500) @IsString({ each: true }) @Matches(/^\S{1,128}$/, NAME_LIST)
  mcp_servers?: string[];

  @ApiPropertyOptional({ description: 'The shell tool' })
  @IsOptional() @IsBoolean({ message: 'shell must be true or false' })
  shell?: boolean;
}

/**
 * A tenant's settings. Each limit: a whole number (0: no limit), or null for the deployment's
 * default. In a PUT, a field left out keeps its value.
 */
export class TenantSettingsDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOptional() @IsString() @MinLength(1) @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 0 })
  @IsOptional() @IsInt() @Min(0) @Max(10_000_000)
  max_users?: number | null;

  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 0 })
  @IsOptional() @IsInt() @Min(0) @Max(1_000_000)
  max_sessions_per_user?: number | null;

  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 1, maximum: 100 })
  @IsOptional() @IsInt() @Min(1, { message: 'max_mcp_servers must be at least 1 (switch MCP off with features_enabled.mcp_servers: [])' }) @Max(100)
  max_mcp_servers?: number | null;

  /** Bytes, or a size such as "500MB" or "2GB". */
  @ApiPropertyOptional({ oneOf: [{ type: 'integer' }, { type: 'string', example: '500MB' }], nullable: true, description: 'Bytes, or a size such as "500MB" or "2GB"' })
  @IsOptional()
  workspace_quota?: number | string | null;

  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 0 })
  @IsOptional() @IsInt() @Min(0) @Max(1_000_000)
  max_concurrent_runs?: number | null;

  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 0 })
  @IsOptional() @IsInt() @Min(0) @Max(10_000_000)
  requests_per_minute?: number | null;

  /** Where the tenant's budget days and months start. */
  @ApiPropertyOptional({ example: 'Europe/Paris', description: "An IANA time zone: where the tenant's budget days and months start (default UTC)" })
  @IsOptional() @IsString() @MaxLength(64)
  timezone?: string;

  @ApiPropertyOptional({ type: TenantFeaturesDto, nullable: true })
  @IsOptional() @ValidateNested() @Type(() => TenantFeaturesDto)
  features_enabled?: TenantFeaturesDto | null;
}

/** POST: a new tenant's id and settings. */
export class CreateTenantDto extends TenantSettingsDto {
  @ApiProperty({ pattern: '^[^\\s:,]{1,128}$' })
  @IsString() @Matches(/^[^\s:,]{1,128}$/, { message: 'tenant_id must be 1-128 characters without white space, ":" or ","' })
  tenant_id: string;
}

export class TenantQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 100 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit = 100;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, default: 0 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(1_000_000_000)
  offset = 0;
}
