import { PriceDirectory } from './price-directory.js';
import { MemoryPriceStore, type PriceStore } from './price-store.js';
import { PriceTable } from './price-table.js';

const ENVIRONMENT = { table: PriceTable.parse({ '*': { input: '1', output: '2' } }, 'USD'), source: 'environment' as const };
const TOKENS = { inputTokens: 1_000_000, outputTokens: 0, cachedInputTokens: 0 };

describe('the price table in force', () => {
  let clock = 0;
  const now = () => clock;

  beforeEach(() => {
    clock = 1_000;
  });

  it("is the environment's until operators store one, which wins once the cache time has passed", async () => {
    const store = new MemoryPriceStore();
    const prices = new PriceDirectory(store, ENVIRONMENT, { cacheMs: 5_000, now });
    expect((await prices.current()).source).toBe('environment');
    await store.replace({ prices: { '*': { input: '3', output: '4' } }, currency: 'EUR', updatedAt: new Date(0), updatedBy: 'ops/olga' });
    clock += 4_999;
    expect((await prices.current()).table.cost('m', TOKENS).cost).toBe(10n ** 12n);
    clock += 1;
    const stored = await prices.current();
    expect([stored.source, stored.table.currency, stored.updatedBy, stored.table.cost('m', TOKENS).cost]).toEqual(['database', 'EUR', 'ops/olga', 3n * 10n ** 12n]);
  });

  it('reads the store once for callers that ask together, and again after forget', async () => {
    let reads = 0;
    const store: PriceStore = { current: async () => (reads++, null), replace: async () => Promise.reject(new Error('unused')), changes: async () => [] };
    const prices = new PriceDirectory(store, ENVIRONMENT, { cacheMs: 5_000, now });
    await Promise.all([prices.current(), prices.current(), prices.current()]);
    await prices.current();
    expect(reads).toBe(1);
    prices.forget();
    await prices.current();
    expect(reads).toBe(2);
  });

  it('keeps the last table read while the store cannot be read, and says so', async () => {
    const memory = new MemoryPriceStore();
    await memory.replace({ prices: { '*': { input: '3', output: '4' } }, currency: 'USD', updatedAt: new Date(0), updatedBy: 'ops/olga' });
    let down = false;
    const errors: unknown[] = [];
    const store: PriceStore = { current: () => (down ? Promise.reject(new Error('database down')) : memory.current()), replace: (p) => memory.replace(p), changes: (p) => memory.changes(p) };
    const prices = new PriceDirectory(store, ENVIRONMENT, { cacheMs: 0, now }, (err) => errors.push(err));
    expect((await prices.current()).source).toBe('database');
    down = true;
    expect((await prices.current()).source).toBe('database');
    expect(errors).toHaveLength(1);
    // Never read: the environment's.
    expect((await new PriceDirectory(store, ENVIRONMENT, { cacheMs: 0, now }).current()).source).toBe('environment');
  });

  it('records each replacement with what it replaced, newest first', async () => {
    const store = new MemoryPriceStore();
    await store.replace({ prices: { a: { input: '1', output: '1' } }, currency: 'USD', updatedAt: new Date(1), updatedBy: 'ops/olga' });
    await store.replace({ prices: { b: { input: '2', output: '2' } }, currency: 'USD', updatedAt: new Date(2), updatedBy: 'ops/omar' });
    const changes = await store.changes({ limit: 10, offset: 0 });
    expect(changes.map((c) => [c.changedBy, c.before?.prices, c.after.prices])).toEqual([
      ['ops/omar', { a: { input: '1', output: '1' } }, { b: { input: '2', output: '2' } }],
      ['ops/olga', undefined, { a: { input: '1', output: '1' } }],
    ]);
  });
});
