import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsObject, IsOptional, IsString, Max, Min } from 'class-validator';

/** One model's price: decimals of the currency per million tokens, at most 6 places. */
export class ModelPriceDto {
  @ApiProperty({ example: '2.50', description: 'Per million input tokens (cached ones excepted)' })
  input: string;

  @ApiProperty({ example: '10.00', description: 'Per million output tokens' })
  output: string;

  @ApiPropertyOptional({ example: '1.25', description: "Per million input tokens read from the provider's cache; default: the input price" })
  cached_input?: string;
}

const PRICE_MAP = {
  type: 'object' as const,
  additionalProperties: { $ref: getSchemaPath(ModelPriceDto) },
  example: { 'gpt-4o': { input: '2.50', output: '10.00', cached_input: '1.25' }, 'claude-*': { input: '3', output: '15' } },
  description: 'By model id (`openai:gpt-4o`), name (`gpt-4o`) or a prefix ending in `*`; the longest match wins, `*` alone matches every model',
};

/** `PUT /admin/prices`: the whole table, which replaces the one in force. */
export class PriceTableDto {
  @ApiProperty(PRICE_MAP)
  @IsObject({ message: 'prices must be an object of model → {input, output, cached_input}' })
  prices: Record<string, unknown>;

  @ApiPropertyOptional({ example: 'USD', description: "Default: DATAAGENT_CURRENCY" })
  @IsOptional() @IsString()
  currency?: string;
}

/** The price table in force and where it comes from. */
export class PricesView {
  @ApiProperty({ enum: ['database', 'environment', 'none'], description: 'database: set through this API; environment: DATAAGENT_MODEL_PRICES(_FILE); none: every call costs 0' })
  source: 'database' | 'environment' | 'none';

  @ApiProperty({ example: 'USD' })
  currency: string;

  @ApiProperty(PRICE_MAP)
  prices: Record<string, ModelPriceDto>;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  updated_at: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'tenant/user of the operator who set it' })
  updated_by: string | null;
}

export class PriceTableSnapshot {
  @ApiProperty()
  currency: string;

  @ApiProperty(PRICE_MAP)
  prices: Record<string, ModelPriceDto>;
}

/** One replacement of the table. */
export class PriceChangeView {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ format: 'date-time' })
  changed_at: string;

  @ApiProperty({ description: 'tenant/user of the operator' })
  changed_by: string;

  @ApiProperty({ type: PriceTableSnapshot, nullable: true, description: 'null: no table had been set through the API (the environment was in force)' })
  before: PriceTableSnapshot | null;

  @ApiProperty({ type: PriceTableSnapshot })
  after: PriceTableSnapshot;
}

export class PriceChangeList {
  @ApiProperty({ type: [PriceChangeView], description: 'Newest first' })
  changes: PriceChangeView[];

  @ApiProperty({ type: 'integer' })
  limit: number;

  @ApiProperty({ type: 'integer' })
  offset: number;
}

export class PriceChangeQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 100 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit = 100;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, default: 0 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(1_000_000_000)
  offset = 0;
}
