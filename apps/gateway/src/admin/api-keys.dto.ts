import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, Min } from 'class-validator';

/** `{user_id, role, tenant_id?, expires_at?}`: a key for a user; `tenant_id` only for operators. */
export class CreateApiKeyDto {
  @ApiProperty({ pattern: '^[^\\s:,]{1,128}$' })
  @IsString() @Matches(/^[^\s:,]{1,128}$/, { message: 'user_id must be 1-128 characters without white space, ":" or ","' })
  user_id: string;

  // The default is told, not declared: openapi-typescript makes a property with a `default` required, in request bodies too.
  @ApiPropertyOptional({ enum: ['user', 'admin', 'operator'], description: 'Default user. admin: manages their tenant; operator: every tenant (only operators issue operator keys)' })
  @IsIn(['user', 'admin', 'operator'], { message: 'role must be user, admin or operator' })
  role: 'user' | 'admin' | 'operator' = 'user';

  @ApiPropertyOptional({ description: 'Operators only: others issue keys for their own tenant', pattern: '^[^\\s:,]{1,128}$' })
  @IsOptional() @IsString() @Matches(/^[^\s:,]{1,128}$/, { message: 'tenant_id must be 1-128 characters without white space, ":" or ","' })
  tenant_id?: string;

  @ApiPropertyOptional({ format: 'date-time' })
  @IsOptional() @IsISO8601({ strict: true }, { message: 'expires_at must be an ISO 8601 date-time' })
  expires_at?: string;
}

export class ApiKeyQueryDto {
  @ApiPropertyOptional({ description: 'Operators: the tenant to list' })
  @IsOptional() @IsString() @Matches(/^[^\s:,]{1,128}$/)
  tenant_id?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 100 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit = 100;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, default: 0 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(1_000_000_000)
  offset = 0;
}
