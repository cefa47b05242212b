import { EVERY_USER, budgetsFor, type BudgetDefinition } from './budget.js';
import { amountOf, budgetLines, exhaustionOf, lineClaim, maxOutputWithin, spentOn } from './budget-lines.js';
import { PriceTable } from './price-table.js';

const at = new Date('2026-12-08T10:00:00Z');
const budget = (fields: Partial<BudgetDefinition>): BudgetDefinition => ({ tenantId: 'acme', scope: 'tenant', userId: '', metric: 'tokens', period: 'day', limit: 1_000n, createdAt: at, updatedAt: at, ...fields });

describe('the budgets of a run', () => {
  it("are the tenant's and the person's own, their own row before the tenant's * one", () => {
    const all = [budget({}), budget({ scope: 'user', userId: EVERY_USER, limit: 50n }), budget({ scope: 'user', userId: EVERY_USER, period: 'month', limit: 900n }), budget({ scope: 'user', userId: 'alice', limit: 70n }), budget({ scope: 'user', userId: 'bob', limit: 5n })];
    expect(budgetsFor(all, 'alice').map((b) => [b.scope, b.userId, b.period, b.limit])).toEqual([
      ['tenant', '', 'day', 1_000n],
      ['user', 'alice', 'day', 70n],
      ['user', '*', 'month', 900n],
    ]);
    expect(budgetsFor(all, 'carol').map((b) => b.limit)).toEqual([1_000n, 50n, 900n]);
  });
});

describe('a budget line', () => {
  it("counts a person's budget under the person, in the tenant's day", () => {
    const [tenant, user] = budgetLines([budget({}), budget({ scope: 'user', userId: EVERY_USER })], 'alice', 'America/New_York', at);
    expect([tenant!.subject, user!.subject]).toEqual(['', 'alice']);
    // 10:00 UTC is 05:00 in New York: still 8 December there.
    expect(user!.window).toEqual({ key: '2026-12-08', startsAt: new Date('2026-12-08T05:00:00Z'), resetsAt: new Date('2026-12-09T05:00:00Z') });
  });

  it('grants the most output tokens that fit, and none below the fewest worth a call', () => {
    const claim = { input: 100, perOutput: 1 };
    expect(maxOutputWithin(claim, 1_000, 1, 4_096)).toBe(900);
    expect(maxOutputWithin(claim, 1_000, 1, 300)).toBe(300);
    expect(maxOutputWithin(claim, 116, 1, 4_096)).toBe(16);
    expect(maxOutputWithin(claim, 115, 1, 4_096)).toBe(-1);
    // A client that asked for fewer than the fewest gets what it asked for.
    expect(maxOutputWithin(claim, 1_000, 1, 5)).toBe(5);
  });

  it('rounds cost up to the micro-unit, for a reservation and for what was spent', () => {
    const prices = PriceTable.parse({ 'gpt-4o': { input: '2.50', output: '10.00' } });
    const [line] = budgetLines([budget({ metric: 'cost', limit: 1_000_000_000n /* 0.001 */ })], 'alice', 'UTC', at);
    expect(line!.limit).toBe(1_000);
    const claim = lineClaim(line!, { call: 1, model: 'openai:gpt-4o', inputTokens: 3, maxOutputTokens: 4_096 }, prices);
    // 3 input tokens at 2.50 per million: 7.5 micro-units; each output token 10.
    expect(claim).toEqual({ input: 7_500_000, perOutput: 10_000_000 });
    expect(amountOf(claim, 0, line!.scale)).toBe(8);
    expect(amountOf(claim, 99, line!.scale)).toBe(998);
    expect(maxOutputWithin(claim, line!.limit, line!.scale, 4_096)).toBe(99);
    expect(spentOn(line!, { inputTokens: 3, outputTokens: 0, cost: 7_500_000n })).toBe(8);
    expect(spentOn(line!, { inputTokens: 0, outputTokens: 0, cost: 1n })).toBe(1);
    expect(spentOn(line!, { inputTokens: 0, outputTokens: 0, cost: 0n })).toBe(0);
    expect(exhaustionOf(line!, 998, 'USD')).toEqual({ scope: 'tenant', metric: 'cost', period: 'day', limit: '0.001000', spent: '0.000998', currency: 'USD', resets_at: '2026-12-09T00:00:00.000Z' });
  });
});
