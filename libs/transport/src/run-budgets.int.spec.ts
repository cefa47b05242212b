import { randomUUID } from 'node:crypto';
import { harnessRedisUrl } from '#test/support/harness-redis.js';
import type { BudgetedRun } from '#core/run/run-ports.js';
import type { BudgetDefinition } from '#core/usage/budget.js';
import { budgetLines } from '#core/usage/budget-lines.js';
import type { CallGrant } from '#core/usage/call-budget.js';
import { PriceTable } from '#core/usage/price-table.js';
import { createRedis, type RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';
import { RedisRunBudgets, spentBudget } from './run-budgets.js';

/** The budget scripts through RedisRunBudgets against the harness Redis, as two workers share them. */

let redis: RedisClient;
let otherWorker: RedisClient;

beforeAll(() => {
  redis = createRedis(harnessRedisUrl(), 'spec-budgets');
  otherWorker = createRedis(harnessRedisUrl(), 'spec-budgets-2');
});

afterAll(async () => {
  await Promise.all([redis, otherWorker].map((c) => c?.quit()));
});

const at = new Date('2026-12-08T17:00:00Z');
const budget = (tenantId: string, fields: Partial<BudgetDefinition>): BudgetDefinition => ({ tenantId, scope: 'tenant', userId: '', metric: 'tokens', period: 'day', limit: 1_000n, createdAt: at, updatedAt: at, ...fields });
const runOf = (tenantId: string, budgets: BudgetDefinition[], extra: Partial<BudgetedRun> = {}): BudgetedRun => ({ runId: randomUUID(), tenantId, userId: 'alice', timeZone: 'UTC', budgets, prices: PriceTable.EMPTY, now: () => at, ...extra });
const claim = (call: number, inputTokens: number, maxOutputTokens: number, model = 'openai:gpt-4o') => ({ call, model, inputTokens, maxOutputTokens });

async function counter(key: string): Promise<{ spent: number; reserved: number; fields: number }> {
  const hash = await redis.hgetall(key);
  return { spent: Number(hash.spent ?? 0), reserved: Number(hash.reserved ?? 0), fields: Object.keys(hash).filter((f) => !['spent', 'reserved', 'refused'].includes(f)).length };
}

describe('RedisRunBudgets', () => {
  it('lets 60 calls at once on two workers reserve no more than the limit, and settles them to what they spent', async () => {
    const tenantId = `t-${randomUUID()}`;
    const limits = [budget(tenantId, { limit: 10_000n })];
    const [a, b] = [new RedisRunBudgets(redis), new RedisRunBudgets(otherWorker)];
    const runs = Array.from({ length: 60 }, (_, i) => ({ run: (i % 2 ? a : b).forRun(runOf(tenantId, limits)), i }));
    const grants = await Promise.all(runs.map(({ run }) => run.reserve(claim(1, 100, 400))));
    const granted = grants.filter((g): g is Extract<CallGrant, { granted: true }> => g.granted);
    const reserved = granted.reduce((sum, g) => sum + 100 + g.maxOutputTokens, 0);
    const key = redisKeys.budgetCounter(tenantId, 'tokens', 'day', '2026-12-08', '');
    console.log(`budget 10000 tokens: ${granted.length} of 60 calls granted, ${reserved} tokens reserved, ${grants.length - granted.length} refused`);
    expect(reserved).toBeLessThanOrEqual(10_000);
    // Every token is handed out: the last granted call gets what was left, not less.
    expect(reserved).toBeGreaterThan(10_000 - 116);
    expect((await counter(key)).reserved).toBe(reserved);
    for (const refusal of grants.filter((g) => !g.granted)) expect(refusal).toMatchObject({ exhausted: { scope: 'tenant', metric: 'tokens', limit: '10000', resets_at: '2026-12-09T00:00:00.000Z' } });
    // Each spends a fifth of its output: the reservations become the spend.
    await Promise.all(runs.map(({ run }, i) => (grants[i]!.granted ? run.settle(1, { inputTokens: 90, outputTokens: 80, cost: 0n }) : Promise.resolve())));
    expect(await counter(key)).toEqual({ spent: granted.length * 170, reserved: 0, fields: 0 });
  });

  it('refuses a call on every budget when one is spent, and reserves on none; the gateway then finds the budget spent', async () => {
    const tenantId = `t-${randomUUID()}`;
    const limits = [budget(tenantId, { limit: 5_000n }), budget(tenantId, { scope: 'user', userId: '*', limit: 200n })];
    const budgets = new RedisRunBudgets(redis);
    const lines = budgetLines(limits, 'alice', 'UTC', at);
    const alice = budgets.forRun(runOf(tenantId, limits));
    expect(await alice.reserve(claim(1, 150, 4_096))).toMatchObject({ granted: true, maxOutputTokens: 50, limitedBy: { scope: 'user', limit: '200' } });
    expect(await budgets.forRun(runOf(tenantId, limits)).reserve(claim(1, 150, 4_096))).toMatchObject({ granted: false, exhausted: { scope: 'user', spent: '200' } });
    expect((await counter(redisKeys.budgetCounter(tenantId, 'tokens', 'day', '2026-12-08', ''))).reserved).toBe(200);
    expect((await counter(redisKeys.budgetCounter(tenantId, 'tokens', 'day', '2026-12-08', 'alice'))).reserved).toBe(200);
    // Held, not spent: were the call to give its reservation back, the refused one (166 tokens) would fit.
    expect(spentBudget(await budgets.counts(tenantId, lines))).toBeUndefined();
    await alice.settle(1, { inputTokens: 150, outputTokens: 40, cost: 0n });
    // 190 settled: the 10 left hold neither the refused call nor the fewest tokens a call may ask.
    expect(spentBudget(await budgets.counts(tenantId, lines))).toMatchObject({ line: { budget: { scope: 'user' } }, spent: 190, reserved: 0, refused: 166 });
    // Bob's own count is untouched.
    expect(spentBudget(await budgets.counts(tenantId, budgetLines(limits, 'bob', 'UTC', at)))).toBeUndefined();
  });

  it("gives back a run's reservations when it is released (a dead worker's), and the whole budget is there again", async () => {
    const tenantId = `t-${randomUUID()}`;
    const limits = [budget(tenantId, { limit: 1_000n }), budget(tenantId, { period: 'month', limit: 50_000n })];
    const budgets = new RedisRunBudgets(redis);
    const dead = runOf(tenantId, limits);
    const calls = budgets.forRun(dead);
    await calls.reserve(claim(1, 100, 200));
    await calls.settle(1, { inputTokens: 100, outputTokens: 50, cost: 0n });
    await calls.reserve(claim(2, 200, 600));
    const runList = redisKeys.budgetRunReservations(tenantId, dead.runId);
    expect(await redis.scard(runList)).toBe(2);
    // Another worker takes the run over: it gives back what the dead one held, on both budgets.
    expect(await new RedisRunBudgets(otherWorker).release(dead)).toBe(2);
    expect(await redis.exists(runList)).toBe(0);
    expect(await counter(redisKeys.budgetCounter(tenantId, 'tokens', 'day', '2026-12-08', ''))).toEqual({ spent: 150, reserved: 0, fields: 0 });
    expect(await counter(redisKeys.budgetCounter(tenantId, 'tokens', 'month', '2026-12', ''))).toEqual({ spent: 150, reserved: 0, fields: 0 });
    expect(await budgets.forRun(runOf(tenantId, limits)).reserve(claim(1, 200, 650))).toMatchObject({ granted: true, maxOutputTokens: 650 });
  });

  it("counts days and months in the tenant's time zone, and lets a counter go a day after its period", async () => {
    const tenantId = `t-${randomUUID()}`;
    const limits = [budget(tenantId, {}), budget(tenantId, { period: 'month' })];
    // 17:00 UTC on 8 December is 01:00 on 9 December in Shanghai.
    await new RedisRunBudgets(redis).forRun(runOf(tenantId, limits, { timeZone: 'Asia/Shanghai' })).reserve(claim(1, 10, 16));
    const day = redisKeys.budgetCounter(tenantId, 'tokens', 'day', '2026-12-09', '');
    const month = redisKeys.budgetCounter(tenantId, 'tokens', 'month', '2026-12', '');
    expect((await counter(day)).reserved).toBe(26);
    expect((await counter(month)).reserved).toBe(26);
    // The Shanghai day ends 2026-12-09T16:00Z; its counter goes a day later.
    expect(await redis.call('PEXPIRETIME', day)).toBe(Date.parse('2026-12-10T16:00:00Z'));
    expect(await redis.call('PEXPIRETIME', month)).toBe(Date.parse('2027-01-01T16:00:00Z'));
    const [line] = budgetLines(limits, 'alice', 'Asia/Shanghai', at);
    expect(line!.window.resetsAt.toISOString()).toBe('2026-12-09T16:00:00.000Z');
  });

  it('counts cost in micro-units, each call rounded up, never down', async () => {
    const tenantId = `t-${randomUUID()}`;
    // 0.10 per million input tokens: a token costs a tenth of a micro-unit; 1.00 per million output: one micro-unit.
    const prices = PriceTable.parse({ 'gpt-4o': { input: '0.10', output: '1.00' } });
    const limits = [budget(tenantId, { metric: 'cost', limit: 100_000_000n /* 0.0001 = 100 micro-units */ })];
    const budgets = new RedisRunBudgets(redis);
    const key = redisKeys.budgetCounter(tenantId, 'cost', 'day', '2026-12-08', '');
    const run = budgets.forRun(runOf(tenantId, limits, { prices }));
    // 10 input tokens (1 micro-unit) leave 99 for output: 99 tokens.
    expect(await run.reserve(claim(1, 10, 4_096))).toMatchObject({ granted: true, maxOutputTokens: 99, limitedBy: { metric: 'cost', currency: 'USD', limit: '0.000100' } });
    expect((await counter(key)).reserved).toBe(100);
    // One input token costs 0.1 micro-units: counted as 1.
    await run.settle(1, { inputTokens: 1, outputTokens: 0, cost: prices.cost('openai:gpt-4o', { inputTokens: 1, outputTokens: 0, cachedInputTokens: 0 }).cost });
    for (const call of [2, 3]) {
      await run.reserve(claim(call, 1, 16));
      await run.settle(call, { inputTokens: 1, outputTokens: 0, cost: 100_000n });
    }
    expect(await counter(key)).toEqual({ spent: 3, reserved: 0, fields: 0 });
    // 97 micro-units left: a call of 10 input tokens may produce 96 output tokens.
    expect(await budgets.forRun(runOf(tenantId, limits, { prices })).reserve(claim(1, 10, 4_096))).toMatchObject({ granted: true, maxOutputTokens: 96 });
    const refused = await budgets.forRun(runOf(tenantId, limits, { prices })).reserve(claim(1, 10, 4_096));
    expect(refused).toMatchObject({ granted: false, exhausted: { metric: 'cost', limit: '0.000100', spent: '0.000100', currency: 'USD' } });
  });

  it("settles and releases a call whose cost budget reserved nothing (a model the table does not price), and the run goes on", async () => {
    const tenantId = `t-${randomUUID()}`;
    const limits = [budget(tenantId, { metric: 'cost', limit: 100_000_000n }), budget(tenantId, { limit: 10_000n })];
    const budgets = new RedisRunBudgets(redis);
    const key = redisKeys.budgetCounter(tenantId, 'cost', 'day', '2026-12-08', '');
    const ref = runOf(tenantId, limits);
    const run = budgets.forRun(ref);
    expect(await run.reserve(claim(1, 10, 100, 'openai:unpriced'))).toMatchObject({ granted: true });
    await run.settle(1, { inputTokens: 10, outputTokens: 20, cost: 0n });
    expect(await run.reserve(claim(2, 10, 100, 'openai:unpriced'))).toMatchObject({ granted: true });
    expect(await budgets.release(ref)).toBeGreaterThan(0);
    expect(await counter(key)).toEqual({ spent: 0, reserved: 0, fields: 0 });
  });
});
