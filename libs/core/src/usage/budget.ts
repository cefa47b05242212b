import type { BudgetPeriod } from './budget-period.js';
import type { BudgetMetric } from './call-budget.js';

/** Whose spend a stored budget caps: the whole tenant's, or each person's. */
export type StoredBudgetScope = 'tenant' | 'user';

/** A user budget with this user id applies to every person of the tenant, each counted on their own. */
export const EVERY_USER = '*';

/**
 * One budget of a tenant (a row of `budgets`): per tenant, or per person (`userId`, or
 * {@link EVERY_USER}), of tokens or cost, per day or month of the tenant's time zone.
 */
export interface BudgetDefinition {
  tenantId: string;
  scope: StoredBudgetScope;
  /** '' for a tenant budget. */
  userId: string;
  metric: BudgetMetric;
  period: BudgetPeriod;
  /** Tokens, or an amount of the price table's currency in pico-units. */
  limit: bigint;
  createdAt: Date;
  updatedAt: Date;
}

/** What names a budget within its tenant: one per scope, person, metric and period. */
export type BudgetKey = Pick<BudgetDefinition, 'tenantId' | 'scope' | 'userId' | 'metric' | 'period'>;

/** The budgets of every tenant (`budgets`). */
export interface BudgetStore {
  list(tenantId: string): Promise<BudgetDefinition[]>;
  /** Creates or replaces the budget its key names. @returns the stored row. */
  put(budget: Omit<BudgetDefinition, 'createdAt' | 'updatedAt'>, at: Date): Promise<BudgetDefinition>;
  /** @returns false when there was none. */
  delete(key: BudgetKey): Promise<boolean>;
}

/** The budgets that apply to one person's runs: the tenant's, and the person's own (their own row before the tenant's `*` one). */
export function budgetsFor(budgets: readonly BudgetDefinition[], userId: string): BudgetDefinition[] {
  const own = budgets.filter((b) => b.scope === 'user' && b.userId === userId);
  const shared = budgets.filter((b) => b.scope === 'user' && b.userId === EVERY_USER && !own.some((o) => o.metric === b.metric && o.period === b.period));
  return [...budgets.filter((b) => b.scope === 'tenant'), ...own, ...shared];
}

function sameKey(a: BudgetKey, b: BudgetKey): boolean {
  return a.tenantId === b.tenantId && a.scope === b.scope && a.userId === b.userId && a.metric === b.metric && a.period === b.period;
}

/** Budgets in process memory (DATAAGENT_SESSION_STORE=memory and unit tests). */
export class MemoryBudgetStore implements BudgetStore {
  private rows: BudgetDefinition[] = [];

  async list(tenantId: string): Promise<BudgetDefinition[]> {
    return this.rows.filter((r) => r.tenantId === tenantId).map((r) => ({ ...r }));
  }

  async put(budget: Omit<BudgetDefinition, 'createdAt' | 'updatedAt'>, at: Date): Promise<BudgetDefinition> {
    const existing = this.rows.find((r) => sameKey(r, budget));
    const row = { ...budget, createdAt: existing?.createdAt ?? at, updatedAt: at };
    this.rows = [...this.rows.filter((r) => r !== existing), row];
    return { ...row };
  }

  async delete(key: BudgetKey): Promise<boolean> {
    const before = this.rows.length;
    this.rows = this.rows.filter((r) => !sameKey(r, key));
    return this.rows.length < before;
  }
}
