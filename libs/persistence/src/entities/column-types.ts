import type { ColumnOptions, PrimaryColumnOptions } from 'typeorm';

/**
 * Identifiers compare byte for byte: with a case-insensitive collation user "Bob" would see
 * the sessions of user "bob".
 */
export function idColumn(name: string, length = 64, nullable = false): ColumnOptions {
  return { name, type: 'varchar', length, collation: 'utf8mb4_bin', nullable };
}

export function primaryIdColumn(name: string, length = 64): PrimaryColumnOptions {
  return { name, type: 'varchar', length, collation: 'utf8mb4_bin' };
}

/** Millisecond timestamps, stored in UTC (the data source sets timezone 'Z'). */
export function timestampColumn(name: string, nullable = false): ColumnOptions {
  return { name, type: 'datetime', precision: 3, nullable };
}

/**
 * A JSON object column's type. `any` rather than `unknown` values because TypeORM's
 * QueryDeepPartialEntity (insert/update payloads) cannot map `unknown`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsonObject = Record<string, any>;
