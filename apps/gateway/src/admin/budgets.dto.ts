import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow } from 'class-validator';

/**
 * A budget to set (PUT): read as it comes (the types say what is documented, not what was
 * checked) and checked by the service, which answers 400 naming
 * what is wrong (a limit's meaning depends on the metric, and a person on the scope).
 */
export class PutBudgetDto {
  @ApiProperty({ enum: ['tenant', 'user'] })
  @Allow()
  scope: string;

  @ApiPropertyOptional({ description: "For a user budget: the person, or * for each person of the tenant on their own" })
  @Allow()
  user_id?: string;

  @ApiProperty({ enum: ['tokens', 'cost'] })
  @Allow()
  metric: string;

  @ApiProperty({ enum: ['day', 'month'], description: "A calendar day or month in the tenant's time zone" })
  @Allow()
  period: string;

  @ApiProperty({ oneOf: [{ type: 'integer' }, { type: 'string', example: '25.50' }], description: 'Tokens (a whole number), or an amount of the price table\'s currency (at most 6 decimals)' })
  @Allow()
  limit: number | string;

  @ApiPropertyOptional({ description: "Operators: the tenant (default: the caller's)" })
  @Allow()
  tenant_id?: string;
}

/** Which budget (DELETE), and whose (GET, operators: `tenant_id`). */
export class BudgetQueryDto {
  @ApiPropertyOptional({ enum: ['tenant', 'user'] })
  @Allow()
  scope?: string;

  @ApiPropertyOptional()
  @Allow()
  user_id?: string;

  @ApiPropertyOptional({ enum: ['tokens', 'cost'] })
  @Allow()
  metric?: string;

  @ApiPropertyOptional({ enum: ['day', 'month'] })
  @Allow()
  period?: string;

  @ApiPropertyOptional()
  @Allow()
  tenant_id?: string;
}

/** A budget as the API shows it, with its count for the current period where it has one counter. */
export class BudgetView {
  @ApiProperty({ enum: ['tenant', 'user'] })
  scope: 'tenant' | 'user';

  @ApiPropertyOptional({ description: 'For a user budget: the person, or *' })
  user_id?: string;

  @ApiProperty({ enum: ['tokens', 'cost'] })
  metric: 'tokens' | 'cost';

  @ApiProperty({ enum: ['day', 'month'] })
  period: 'day' | 'month';

  @ApiProperty({ description: 'Tokens, or a decimal amount' })
  limit: string;

  @ApiPropertyOptional({ description: 'Spent in the current period (absent for a * budget: each person has their own count)' })
  spent?: string;

  @ApiPropertyOptional({ description: 'Held now by calls under way' })
  reserved?: string;

  @ApiProperty({ format: 'date-time', description: 'When the current period ends' })
  resets_at: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;
}

export class BudgetList {
  @ApiProperty()
  tenant_id: string;

  @ApiProperty({ description: "Where the tenant's days and months start" })
  timezone: string;

  @ApiProperty({ type: [BudgetView] })
  budgets: BudgetView[];
}

export class BudgetDeleted {
  @ApiProperty()
  deleted: boolean;
}
