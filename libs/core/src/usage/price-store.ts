import type { PriceText } from './price-table.js';

/** A price table as stored: its prices as written (decimals per million tokens) and its currency. */
export interface StoredPrices {
  prices: Record<string, PriceText>;
  currency: string;
  updatedAt: Date;
  /** Who set it: `tenant/user` of the operator's key. */
  updatedBy: string;
}

/** One replacement of the stored table: what it was (null: none was stored) and what it became. */
export interface PriceChange {
  id: number;
  changedAt: Date;
  changedBy: string;
  before: { prices: Record<string, PriceText>; currency: string } | null;
  after: { prices: Record<string, PriceText>; currency: string };
}

/** The price table operators set through the API (`model_prices`), and the record of its changes (`model_price_changes`). */
export interface PriceStore {
  /** The stored table; null when none was ever set (the environment's is in force). */
  current(): Promise<StoredPrices | null>;
  /** Replaces the stored table and records the change, together. */
  replace(next: StoredPrices): Promise<PriceChange>;
  /** Changes, newest first. */
  changes(page: { limit: number; offset: number }): Promise<PriceChange[]>;
}

/** The stored table in this process (DATAAGENT_SESSION_STORE=memory). */
export class MemoryPriceStore implements PriceStore {
  private stored: StoredPrices | null = null;
  private readonly log: PriceChange[] = [];

  async current(): Promise<StoredPrices | null> {
    return this.stored ? structuredClone(this.stored) : null;
  }

  async replace(next: StoredPrices): Promise<PriceChange> {
    const change: PriceChange = {
      id: this.log.length + 1,
      changedAt: next.updatedAt,
      changedBy: next.updatedBy,
      before: this.stored ? { prices: this.stored.prices, currency: this.stored.currency } : null,
      after: { prices: next.prices, currency: next.currency },
    };
    this.stored = structuredClone(next);
    this.log.push(structuredClone(change));
    return change;
  }

  async changes(page: { limit: number; offset: number }): Promise<PriceChange[]> {
    return structuredClone([...this.log].reverse().slice(page.offset, page.offset + page.limit));
  }
}
