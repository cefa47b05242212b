import { readFileSync } from 'node:fs';
import { IsInt, IsOptional, IsString, Matches, Max, Min, registerDecorator } from 'class-validator';
import { Env } from '../config/env.js';
import { BadPriceTableError, PriceTable } from './price-table.js';

/**
 * What model calls cost: the deployment's price table (a table operators set through
 * `PUT /api/v1/admin/prices` wins over it) and its currency. Read by gateways (the admin API
 * shows it) and workers (they price each call).
 */
export class PricingConfig {
  /**
   * Prices per model as JSON, per million tokens: `{"gpt-4o": {"input": "2.50", "output": "10.00",
   * "cached_input": "1.25"}, "claude-*": {...}, "*": {...}}`. A model matched by no entry costs
   * nothing, and its usage says `priced: false`.
   */
  @Env('DATAAGENT_MODEL_PRICES') @IsOptional() @IsString() @IsPriceTable('text')
  modelPrices?: string;

  /** A file holding the price table, as DATAAGENT_MODEL_PRICES (which wins when both are set). */
  @Env('DATAAGENT_MODEL_PRICES_FILE') @IsOptional() @IsString() @IsPriceTable('file')
  modelPricesFile?: string;

  /** The currency prices and costs are in: a code such as USD, EUR or CREDITS. */
  @Env('DATAAGENT_CURRENCY') @Matches(/^[A-Z][A-Z0-9_]{1,9}$/, { message: 'must be a code such as USD or CREDITS (capitals, digits, _)' })
  currency = 'USD';

  /** Seconds a worker trusts the price table it read: a table set through the admin API applies everywhere within this. */
  @Env('DATAAGENT_PRICES_CACHE_SECONDS', 'int') @IsInt() @Min(0) @Max(300)
  pricesCacheSeconds = 5;
}

/** Where the table in force comes from. */
export type PriceSource = 'database' | 'environment' | 'none';

/** The environment's table (DATAAGENT_MODEL_PRICES, else the file); an empty one when neither is set. */
export function environmentPrices(config: PricingConfig): { table: PriceTable; source: PriceSource } {
  const text = config.modelPrices ?? (config.modelPricesFile ? readFileSync(config.modelPricesFile, 'utf8') : undefined);
  if (text === undefined) return { table: PriceTable.parse({}, config.currency), source: 'none' };
  return { table: PriceTable.parse(text, config.currency), source: 'environment' };
}

/** Validates a price table given as JSON text, or as a file of it; the message is the table's own error. */
function IsPriceTable(given: 'text' | 'file'): PropertyDecorator {
  return (target, property) => {
    let problem = '';
    registerDecorator({
      name: 'isPriceTable',
      target: target.constructor,
      propertyName: String(property),
      validator: {
        validate: (value: unknown) => {
          if (typeof value !== 'string') return true;
          try {
            PriceTable.parse(given === 'file' ? readFileSync(value, 'utf8') : value);
            return true;
          } catch (err) {
            problem = err instanceof BadPriceTableError ? err.message : `cannot be read: ${(err as Error).message}`;
            return false;
          }
        },
        defaultMessage: () => problem,
      },
    });
  };
}
