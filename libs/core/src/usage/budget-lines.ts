import { periodOf, type PeriodWindow } from './budget-period.js';
import type { BudgetDefinition } from './budget.js';
import { MIN_OUTPUT_TOKENS, type BudgetExhaustion, type CallClaim, type CallSpend } from './call-budget.js';
import { formatPico, microToPico, picoToMicroCeil } from './money.js';
import type { PriceTable } from './price-table.js';

/**
 * One budget as a run's call meets it, in the unit its counter keeps: tokens, or micro-units of
 * the currency for a cost budget (pico-unit amounts are rounded up to them, never down).
 */
export interface BudgetLine {
  budget: BudgetDefinition;
  /** Whose spend the counter holds: the run's person for a user budget, '' for the tenant's. */
  subject: string;
  /** The period the call falls in. */
  window: PeriodWindow;
  /** The budget's limit in counter units (a cost limit's sub-micro part is dropped: never more than allowed). */
  limit: number;
  /** What one unit of a call's amounts is in counter units: 1 for tokens, 10^6 pico-units per micro-unit for cost. */
  scale: number;
}

/** A call's worst case on one line: `input` plus `perOutput` per output token, in 1/scale counter units. */
export interface LineClaim {
  input: number;
  perOutput: number;
}

const PICO_PER_MICRO = 1_000_000;

/** The lines of a run's budgets at `now` in the tenant's time zone. */
export function budgetLines(budgets: readonly BudgetDefinition[], userId: string, timeZone: string, now: Date): BudgetLine[] {
  return budgets.map((budget) => ({
    budget,
    subject: budget.scope === 'user' ? userId : '',
    window: periodOf(now, budget.period, timeZone),
    limit: budget.metric === 'tokens' ? Number(budget.limit) : Number(budget.limit / BigInt(PICO_PER_MICRO)),
    scale: budget.metric === 'tokens' ? 1 : PICO_PER_MICRO,
  }));
}

/** What a claim reserves on a line, before its output is known. @throws RangeError for a price too large to count exactly. */
export function lineClaim(line: BudgetLine, claim: CallClaim, prices: PriceTable): LineClaim {
  if (line.budget.metric === 'tokens') return { input: claim.inputTokens, perOutput: 1 };
  const input = prices.worstCase(claim.model, claim.inputTokens, 0);
  const perOutput = prices.worstCase(claim.model, 0, 1);
  if (input > BigInt(Number.MAX_SAFE_INTEGER) / 2n || perOutput > BigInt(Number.MAX_SAFE_INTEGER) / 1_000_000n) throw new RangeError(`a call of ${claim.model} costs too much to be counted against a budget`);
  return { input: Number(input), perOutput: Number(perOutput) };
}

/** A claim's amount with `output` tokens, in counter units, rounded up. */
export function amountOf(claim: LineClaim, output: number, scale: number): number {
  const total = claim.input + output * claim.perOutput;
  return Math.floor(total / scale) + (total % scale > 0 ? 1 : 0);
}

/** The most output tokens (up to `cap`) whose amount fits in `left`; -1 when not even `MIN_OUTPUT_TOKENS` fit. */
export function maxOutputWithin(claim: LineClaim, left: number, scale: number, cap: number): number {
  if (left <= 0 || amountOf(claim, MIN_OUTPUT_TOKENS, scale) > left) return -1;
  if (claim.perOutput === 0) return cap;
  let out = Math.min(cap, Math.floor((left * scale - claim.input) / claim.perOutput));
  while (out > MIN_OUTPUT_TOKENS && amountOf(claim, out, scale) > left) out--;
  return Math.min(cap, Math.max(out, MIN_OUTPUT_TOKENS));
}

/** What a settled call spent on a line, in counter units (cost rounded up to a micro-unit). */
export function spentOn(line: BudgetLine, spent: CallSpend): number {
  return line.budget.metric === 'tokens' ? spent.inputTokens + spent.outputTokens : picoToMicroCeil(spent.cost);
}

/** The refusal a line gives: its limit, what is spent or held on it (counter units), and when it resets. */
export function exhaustionOf(line: BudgetLine, used: number, currency: string): BudgetExhaustion {
  const { budget, window } = line;
  const tokens = budget.metric === 'tokens';
  return {
    scope: budget.scope,
    metric: budget.metric,
    period: budget.period,
    limit: tokens ? budget.limit.toString() : formatPico(budget.limit, 6),
    spent: tokens ? String(used) : formatPico(microToPico(used), 6),
    ...(tokens ? {} : { currency }),
    resets_at: window.resetsAt.toISOString(),
  };
}
