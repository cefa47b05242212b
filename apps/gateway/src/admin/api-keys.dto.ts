import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, Min } from 'class-validator';

/** `{user_id, role, tenant_id?, expires_at?}`: a key for a user; `tenant_id` only for operators. */
export class CreateApiKeyDto {
  @IsString() @Matches(/^[^\s:,]{1,128}$/, { message: 'user_id must be 1-128 characters without white space, ":" or ","' })
  user_id: string;

  @IsIn(['user', 'admin', 'operator'], { message: 'role must be user, admin or operator' })
  role: 'user' | 'admin' | 'operator' = 'user';

  @IsOptional() @IsString() @Matches(/^[^\s:,]{1,128}$/, { message: 'tenant_id must be 1-128 characters without white space, ":" or ","' })
  tenant_id?: string;

  @IsOptional() @IsISO8601({ strict: true }, { message: 'expires_at must be an ISO 8601 date-time' })
  expires_at?: string;
}

export class ApiKeyQueryDto {
  @IsOptional() @IsString() @Matches(/^[^\s:,]{1,128}$/)
  tenant_id?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit = 100;

  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(1_000_000_000)
  offset = 0;
}
