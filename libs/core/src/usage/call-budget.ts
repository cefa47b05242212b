import type { BudgetPeriod } from './budget-period.js';

/** What a budget counts: tokens (input and output together), or cost in the price table's currency. */
export type BudgetMetric = 'tokens' | 'cost';

/** Whose spend a budget caps: a tenant's, one person's, or one run's. */
export type BudgetScope = 'tenant' | 'user' | 'run';

/** The budget a call found spent: which, how much it allows, how much is spent, and when it starts again. */
export interface BudgetExhaustion {
  scope: BudgetScope;
  metric: BudgetMetric;
  /** Absent for a run's own limit. */
  period?: BudgetPeriod;
  /** Tokens, or a decimal amount of `currency`. */
  limit: string;
  spent: string;
  currency?: string;
  /** ISO time the period starts again; absent for a run's own limit. */
  resets_at?: string;
}

/** A model call's worst case, asked for before the call. */
export interface CallClaim {
  /** The call's number within the run (1, 2, ...): a reservation's key with the run's id. */
  call: number;
  model: string;
  /** Input tokens to reserve: an estimate of the request with a margin. */
  inputTokens: number;
  /** The most output tokens the call may produce. */
  maxOutputTokens: number;
}

/**
 * What a call may do: produce at most `maxOutputTokens` (capped to what every budget has left), or
 * nothing. `limitedBy` names the budget that capped it below what the call asked for: an answer
 * cut at that cap was cut by the budget.
 */
export type CallGrant = { granted: true; maxOutputTokens: number; limitedBy?: BudgetExhaustion } | { granted: false; exhausted: BudgetExhaustion };

/** A call's tokens and exact cost (pico-units), as it is recorded. */
export interface CallSpend {
  inputTokens: number;
  outputTokens: number;
  cost: bigint;
}

/**
 * The budgets a run's model calls draw on (a tenant's and a person's, per day and month),
 * shared by every worker. Each call reserves its worst case before it starts, atomically
 * across the budgets, and settles to what it used after: calls on many workers at once never
 * spend more than a budget allows.
 */
export interface ModelCallBudget {
  reserve(claim: CallClaim): Promise<CallGrant>;
  /** Replaces the call's reservation with what it spent. */
  settle(call: number, spent: CallSpend): Promise<void>;
}

/** The fewest output tokens worth a call: below this a budget counts as spent. */
export const MIN_OUTPUT_TOKENS = 16;

/** A run's own limit on tokens, counted locally: its tally continues across workers with the run's journal. */
export class RunTokenLimit implements ModelCallBudget {
  constructor(
    private readonly limit: number,
    /** Tokens the run's calls had used before this attempt. */
    private used: number,
  ) {}

  async reserve(claim: CallClaim): Promise<CallGrant> {
    const left = this.limit - this.used - claim.inputTokens;
    const exhausted: BudgetExhaustion = { scope: 'run', metric: 'tokens', limit: String(this.limit), spent: String(this.used) };
    if (left < MIN_OUTPUT_TOKENS) return { granted: false, exhausted };
    return left < claim.maxOutputTokens ? { granted: true, maxOutputTokens: left, limitedBy: exhausted } : { granted: true, maxOutputTokens: claim.maxOutputTokens };
  }

  async settle(_call: number, spent: CallSpend): Promise<void> {
    this.used += spent.inputTokens + spent.outputTokens;
  }
}

/** Several budgets as one: a call is granted what the tightest allows, and settled in each. A refusal gives back what the others reserved. */
export class AllBudgets implements ModelCallBudget {
  constructor(private readonly budgets: readonly ModelCallBudget[]) {}

  async reserve(claim: CallClaim): Promise<CallGrant> {
    let maxOutputTokens = claim.maxOutputTokens;
    let limitedBy: BudgetExhaustion | undefined;
    const taken: ModelCallBudget[] = [];
    for (const budget of this.budgets) {
      const grant = await budget.reserve({ ...claim, maxOutputTokens });
      if (!grant.granted) {
        await Promise.all(taken.map((b) => b.settle(claim.call, { inputTokens: 0, outputTokens: 0, cost: 0n })));
        return grant;
      }
      taken.push(budget);
      if (grant.maxOutputTokens < maxOutputTokens) {
        maxOutputTokens = grant.maxOutputTokens;
        limitedBy = grant.limitedBy;
      }
    }
    return { granted: true, maxOutputTokens, ...(limitedBy ? { limitedBy } : {}) };
  }

  async settle(call: number, spent: CallSpend): Promise<void> {
    await Promise.all(this.budgets.map((b) => b.settle(call, spent)));
  }
}
