import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { USAGE_GROUPS, type UsageGroup } from '#core/usage/usage-store.js';

/**
 * `GET /usage` (and `/admin/usage`): which calls to sum and how to group them. Checked by the
 * service, so a bad one answers 400 `invalid_usage_query` naming the parameter.
 */
export class UsageQueryDto {
  @ApiPropertyOptional({ format: 'date', description: 'First day (UTC), included; default: the first of the current month' })
  @IsOptional() @IsString()
  from?: string;

  @ApiPropertyOptional({ format: 'date', description: 'Last day (UTC), included; default: today' })
  @IsOptional() @IsString()
  to?: string;

  @ApiPropertyOptional({ maxLength: 200, description: 'Only calls of this model (its id, as usage events name it)' })
  @IsOptional() @IsString() @MaxLength(200)
  model?: string;

  @ApiPropertyOptional({ enum: USAGE_GROUPS, default: 'day' })
  @IsOptional() @IsString()
  group_by?: string;

  @ApiPropertyOptional({ enum: ['json', 'csv'], default: 'json', description: 'csv: a header line, then a line per group (as does `Accept: text/csv`)' })
  @IsOptional() @IsString()
  format?: string;
}

/** `GET /admin/usage`: a tenant's (admins: their own; operators: any, or every tenant) and one person's. */
export class AdminUsageQueryDto extends UsageQueryDto {
  @ApiPropertyOptional({ maxLength: 128, description: "Operators: only this tenant's calls (default: every tenant). Admins: their own tenant only" })
  @IsOptional() @IsString() @MaxLength(128)
  tenant_id?: string;

  @ApiPropertyOptional({ maxLength: 128, description: "Only this person's calls" })
  @IsOptional() @IsString() @MaxLength(128)
  user_id?: string;
}

/** Sums of model calls: tokens, what they cost, and how many were estimated. */
export class UsageSums {
  @ApiProperty({ example: 'USD' })
  currency: string;

  @ApiProperty({ type: 'integer', description: 'Model calls' })
  calls: number;

  @ApiProperty({ type: 'integer', description: 'Includes cached_input_tokens' })
  input_tokens: number;

  @ApiProperty({ type: 'integer' })
  output_tokens: number;

  @ApiProperty({ type: 'integer', description: "Input tokens read from the provider's prompt cache" })
  cached_input_tokens: number;

  @ApiProperty({ example: '0.012500000000', description: 'Exact: a decimal of 12 places in `currency`' })
  cost: string;

  @ApiProperty({ type: 'integer', description: "Calls whose figures are the model family's tokenizer estimate (the provider reported none)" })
  estimated_calls: number;
}

/** One group's sums. */
export class UsageRow extends UsageSums {
  @ApiProperty({ description: 'The day (YYYY-MM-DD, UTC), the user id or the model, by group_by' })
  key: string;

  @ApiPropertyOptional({ description: "Grouped by user: the person's tenant" })
  tenant_id?: string;
}

export class UsageReport {
  @ApiProperty({ format: 'date' })
  from: string;

  @ApiProperty({ format: 'date' })
  to: string;

  @ApiProperty({ enum: USAGE_GROUPS })
  group_by: UsageGroup;

  @ApiProperty({ type: String, nullable: true, description: 'The tenant summed; null: every tenant (operators)' })
  tenant_id: string | null;

  @ApiProperty({ type: String, nullable: true })
  user_id: string | null;

  @ApiProperty({ type: String, nullable: true })
  model: string | null;

  @ApiProperty({ type: [UsageRow], description: 'By tenant (grouped by user), then key, then currency' })
  rows: UsageRow[];

  @ApiProperty({ type: [UsageSums], description: 'The sums of every row, one per currency (none without calls)' })
  totals: UsageSums[];
}
