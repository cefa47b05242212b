import fc from 'fast-check';
import type { EventDict, UsageEventDict } from '../events/execution-event.js';
import { formatPico, parsePico } from './money.js';
import { MemoryUsageStore, sumUsage, usageFactsOf, usageTotals, type UsageFact } from './usage-store.js';

const ALICE = { tenantId: 'acme', userId: 'alice', assistantId: 'general', sessionId: 's1' };

function usage(seq: number, timestamp: string, fields: Partial<UsageEventDict> = {}): UsageEventDict {
  return { event_type: 'usage', timestamp, session_id: 's1', run_id: 'r1', seq, model: 'openai:gpt-4o', call: seq, input_tokens: 1000, output_tokens: 100, cached_input_tokens: 0, cost: '0.003500000000', currency: 'USD', ...fields };
}

function fact(fields: Partial<UsageFact>): UsageFact {
  return { runId: 'r1', seq: 1, ...ALICE, model: 'm', day: '2026-12-08', occurredAt: new Date('2026-12-08T10:00:00Z'), inputTokens: 10, outputTokens: 1, cachedInputTokens: 0, estimated: false, cost: 1n, currency: 'USD', ...fields };
}

describe('usage facts', () => {
  it("are a run's usage events with its owner, dated by the call's UTC day, cost exact", () => {
    const events: EventDict[] = [
      { event_type: 'run_started', timestamp: '2026-12-07T23:59:59.000Z', session_id: 's1', run_id: 'r1', seq: 2, worker_id: 'w' },
      usage(3, '2026-12-07T23:59:59.999Z', { cached_input_tokens: 400 }),
      { event_type: 'text', timestamp: '2026-12-08T00:00:00.000Z', session_id: 's1', run_id: 'r1', seq: 4, content: 'x', is_final: false },
      usage(5, '2026-12-08T00:00:00.000Z', { estimated: true, cost: '0.000000000001', model: 'anthropic:claude' }),
    ];
    const facts = usageFactsOf('r1', events, { ...ALICE, ...{ status: 'running' } } as typeof ALICE);
    expect(facts).toEqual([
      { runId: 'r1', seq: 3, ...ALICE, model: 'openai:gpt-4o', day: '2026-12-07', occurredAt: new Date('2026-12-07T23:59:59.999Z'), inputTokens: 1000, outputTokens: 100, cachedInputTokens: 400, estimated: false, cost: 3_500_000_000n, currency: 'USD' },
      { runId: 'r1', seq: 5, ...ALICE, model: 'anthropic:claude', day: '2026-12-08', occurredAt: new Date('2026-12-08T00:00:00.000Z'), inputTokens: 1000, outputTokens: 100, cachedInputTokens: 0, estimated: true, cost: 1n, currency: 'USD' },
    ]);
  });
});

describe('summing usage', () => {
  const facts = [
    fact({ seq: 1, day: '2026-12-01', cost: 5n }),
    fact({ seq: 2, day: '2026-12-02', model: 'n', estimated: true, cachedInputTokens: 4 }),
    fact({ runId: 'r2', seq: 1, userId: 'bob', day: '2026-12-02', cost: 7n }),
    fact({ runId: 'r3', seq: 1, tenantId: 'globex', userId: 'bob', day: '2026-12-02' }),
    fact({ runId: 'r4', seq: 1, day: '2026-11-30' }),
    fact({ runId: 'r5', seq: 1, day: '2026-12-03', currency: 'EUR', cost: 2n }),
  ];
  const december = { from: '2026-12-01', to: '2026-12-31' };

  it('groups by day, user (with the tenant) or model, within the dates, both included', () => {
    expect(sumUsage(facts, { ...december, tenantId: 'acme', groupBy: 'day' }).map((l) => [l.key, l.currency, l.calls, l.cost])).toEqual([
      ['2026-12-01', 'USD', 1, 5n],
      ['2026-12-02', 'USD', 2, 8n],
      ['2026-12-03', 'EUR', 1, 2n],
    ]);
    expect(sumUsage(facts, { ...december, groupBy: 'user' }).map((l) => [l.tenantId, l.key, l.currency, l.calls])).toEqual([
      ['acme', 'alice', 'EUR', 1],
      ['acme', 'alice', 'USD', 2],
      ['acme', 'bob', 'USD', 1],
      ['globex', 'bob', 'USD', 1],
    ]);
    const byModel = sumUsage(facts, { from: '2026-12-02', to: '2026-12-02', tenantId: 'acme', groupBy: 'model' });
    expect(byModel).toEqual([
      { key: 'm', currency: 'USD', calls: 1, inputTokens: 10, outputTokens: 1, cachedInputTokens: 0, cost: 7n, estimatedCalls: 0 },
      { key: 'n', currency: 'USD', calls: 1, inputTokens: 10, outputTokens: 1, cachedInputTokens: 4, cost: 1n, estimatedCalls: 1 },
    ]);
  });

  it('filters by tenant, user and model', () => {
    expect(sumUsage(facts, { ...december, tenantId: 'globex', groupBy: 'day' }).map((l) => l.calls)).toEqual([1]);
    expect(sumUsage(facts, { ...december, tenantId: 'acme', userId: 'bob', groupBy: 'day' }).map((l) => l.key)).toEqual(['2026-12-02']);
    expect(sumUsage(facts, { ...december, model: 'n', groupBy: 'model' }).map((l) => l.key)).toEqual(['n']);
    expect(sumUsage(facts, { from: '2027-01-01', to: '2027-01-31', groupBy: 'day' })).toEqual([]);
  });

  it('totals per currency', () => {
    expect(usageTotals(sumUsage(facts, { ...december, groupBy: 'day' }))).toEqual([
      { currency: 'EUR', calls: 1, inputTokens: 10, outputTokens: 1, cachedInputTokens: 0, cost: 2n, estimatedCalls: 0 },
      { currency: 'USD', calls: 4, inputTokens: 40, outputTokens: 4, cachedInputTokens: 4, cost: 14n, estimatedCalls: 1 },
    ]);
  });

  it('is exact over many small calls, whatever the grouping', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.integer({ min: 1, max: 28 }), fc.constantFrom('alice', 'bob'), fc.constantFrom('m', 'n')), { maxLength: 300 }), (calls) => {
        const all = calls.map(([cost, day, userId, model], i) => fact({ seq: i + 1, cost: parsePico(formatPico(cost)), day: `2026-12-${String(day).padStart(2, '0')}`, userId, model }));
        const total = all.reduce((sum, f) => sum + f.cost, 0n);
        for (const groupBy of ['day', 'user', 'model'] as const) {
          const lines = sumUsage(all, { ...december, groupBy });
          if (lines.reduce((sum, l) => sum + l.cost, 0n) !== total) return false;
          if (lines.reduce((sum, l) => sum + l.calls, 0) !== all.length) return false;
        }
        return true;
      }),
    );
  });

  it('counts each (run, seq) once in the memory store, whatever is offered again', async () => {
    const store = new MemoryUsageStore();
    await store.record([fact({ seq: 1 }), fact({ seq: 2 })]);
    // A run continued by another worker re-archives its log: the first calls again, and a new one.
    await store.record([fact({ seq: 1, cost: 999n }), fact({ seq: 2 }), fact({ seq: 3 })]);
    expect(await store.report({ ...december, groupBy: 'day' })).toEqual([{ key: '2026-12-08', currency: 'USD', calls: 3, inputTokens: 30, outputTokens: 3, cachedInputTokens: 0, cost: 3n, estimatedCalls: 0 }]);
  });
});
