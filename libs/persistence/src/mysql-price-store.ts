import type { DataSource } from 'typeorm';
import type { PriceChange, PriceStore, StoredPrices } from '#core/usage/price-store.js';

/** The one row of `model_prices`. */
const ROW_ID = 1;

interface ChangeRow {
  id: string;
  changed_at: Date;
  changed_by: string;
  before_prices: string | null;
  after_prices: string;
}

/** The price table operators set, in `model_prices`, and its changes in `model_price_changes`. */
export class MysqlPriceStore implements PriceStore {
  constructor(private readonly dataSource: DataSource) {}

  async current(): Promise<StoredPrices | null> {
    const [row]: Array<{ prices: string; currency: string; updated_at: Date; updated_by: string }> = await this.dataSource.query('SELECT prices, currency, updated_at, updated_by FROM model_prices WHERE id = ?', [ROW_ID]);
    return row ? { prices: JSON.parse(row.prices), currency: row.currency, updatedAt: row.updated_at, updatedBy: row.updated_by } : null;
  }

  async replace(next: StoredPrices): Promise<PriceChange> {
    return this.dataSource.transaction(async (manager) => {
      // FOR UPDATE: two operators' changes are recorded one after the other, each with the table it replaced.
      const [row]: Array<{ prices: string; currency: string }> = await manager.query('SELECT prices, currency FROM model_prices WHERE id = ? FOR UPDATE', [ROW_ID]);
      const before = row ? JSON.stringify({ prices: JSON.parse(row.prices), currency: row.currency }) : null;
      const after = JSON.stringify({ prices: next.prices, currency: next.currency });
      await manager.query(
        'INSERT INTO model_prices (id, prices, currency, updated_at, updated_by) VALUES (?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE prices = VALUES(prices), currency = VALUES(currency), updated_at = VALUES(updated_at), updated_by = VALUES(updated_by)',
        [ROW_ID, JSON.stringify(next.prices), next.currency, next.updatedAt, next.updatedBy],
      );
      const inserted: { insertId: number } = await manager.query('INSERT INTO model_price_changes (changed_at, changed_by, before_prices, after_prices) VALUES (?, ?, ?, ?)', [next.updatedAt, next.updatedBy, before, after]);
      return changeOf({ id: String(inserted.insertId), changed_at: next.updatedAt, changed_by: next.updatedBy, before_prices: before, after_prices: after });
    });
  }

  async changes(page: { limit: number; offset: number }): Promise<PriceChange[]> {
    const rows: ChangeRow[] = await this.dataSource.query('SELECT id, changed_at, changed_by, before_prices, after_prices FROM model_price_changes ORDER BY id DESC LIMIT ? OFFSET ?', [page.limit, page.offset]);
    return rows.map(changeOf);
  }
}

function changeOf(row: ChangeRow): PriceChange {
  return {
    id: Number(row.id),
    changedAt: row.changed_at,
    changedBy: row.changed_by,
    before: row.before_prices === null ? null : JSON.parse(row.before_prices),
    after: JSON.parse(row.after_prices),
  };
}
