import { PriceTable } from './price-table.js';
import type { PriceSource } from './pricing-config.js';
import type { PriceStore, StoredPrices } from './price-store.js';

/** The price table in force, and where it comes from. */
export interface PricesInForce {
  table: PriceTable;
  source: PriceSource;
  /** When the stored table was set, and by whom; absent for the environment's. */
  updatedAt?: Date;
  updatedBy?: string;
}

export interface PriceDirectoryOptions {
  /** How long a table read is trusted: a table set through the admin API applies everywhere within this. */
  cacheMs: number;
  now?: () => number;
}

/**
 * The price table in force: the one operators stored (`model_prices`) wins over the
 * environment's. Read again at most every `cacheMs`, so a change applies on every worker within
 * that without a read per call. When the store cannot be read, the last table read stays in
 * force (the environment's if none was).
 */
export class PriceDirectory {
  private cached?: { prices: PricesInForce; readAt: number };
  private reading?: Promise<PricesInForce>;
  private readonly now: () => number;

  constructor(
    private readonly store: PriceStore,
    private readonly environment: PricesInForce,
    private readonly options: PriceDirectoryOptions,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** The table in force now (at most `cacheMs` old). */
  async current(): Promise<PricesInForce> {
    const cached = this.cached;
    if (cached && this.now() - cached.readAt < this.options.cacheMs) return cached.prices;
    this.reading ??= this.store
      .current()
      .then((stored) => {
        const prices = stored ? pricesOf(stored) : this.environment;
        this.cached = { prices, readAt: this.now() };
        return prices;
      })
      .catch((err: unknown) => {
        this.onError(err);
        return cached?.prices ?? this.environment;
      })
      .finally(() => (this.reading = undefined));
    return this.reading;
  }

  /** Drops the table read (this process just stored another). */
  forget(): void {
    this.cached = undefined;
  }
}

/** A stored table as it applies. A stored table was checked when it was set; one that no longer parses is a bug, and throws. */
export function pricesOf(stored: StoredPrices): PricesInForce {
  return { table: PriceTable.parse(stored.prices, stored.currency), source: 'database', updatedAt: stored.updatedAt, updatedBy: stored.updatedBy };
}
