import type { TenantDirectory } from './tenant-directory.js';
import type { BudgetDefinition, BudgetStore } from '../usage/budget.js';

/** A tenant's budgets and the time zone their days and months are counted in. */
export interface TenantBudgets {
  tenantId: string;
  timeZone: string;
  budgets: BudgetDefinition[];
}

export interface BudgetDirectoryOptions {
  /** How long a tenant's budgets are trusted before they are read again: a change applies everywhere within this. */
  cacheMs: number;
  now?: () => number;
}

/**
 * Each tenant's budgets, read from `budgets` and kept briefly (as {@link TenantDirectory} keeps
 * tenants' settings), so a gateway's admission and a worker's run read no row per request. A
 * tenant without budgets costs its runs nothing more.
 */
export class BudgetDirectory {
  private readonly cache = new Map<string, { budgets: BudgetDefinition[]; readAt: number }>();
  private readonly reading = new Map<string, Promise<BudgetDefinition[]>>();
  private readonly now: () => number;

  constructor(
    private readonly store: BudgetStore,
    private readonly tenants: TenantDirectory,
    private readonly options: BudgetDirectoryOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** The tenant's budgets and time zone. When `budgets` cannot be read, the last ones read are used; with none, the error goes on. */
  async of(tenantId: string): Promise<TenantBudgets> {
    const [budgets, policy] = await Promise.all([this.budgets(tenantId), this.tenants.policy(tenantId)]);
    return { tenantId, timeZone: policy.timeZone, budgets };
  }

  /** Drops what this process knows of a tenant's budgets (after it changed them itself). */
  forget(tenantId: string): void {
    this.cache.delete(tenantId);
  }

  private budgets(tenantId: string): Promise<BudgetDefinition[]> {
    const cached = this.cache.get(tenantId);
    if (cached && this.now() - cached.readAt < this.options.cacheMs) return Promise.resolve(cached.budgets);
    let pending = this.reading.get(tenantId);
    if (!pending) {
      pending = this.store
        .list(tenantId)
        .then((budgets) => {
          this.cache.set(tenantId, { budgets, readAt: this.now() });
          return budgets;
        })
        .catch((err: unknown) => {
          if (cached) return cached.budgets;
          throw err;
        })
        .finally(() => this.reading.delete(tenantId));
      this.reading.set(tenantId, pending);
    }
    return pending;
  }
}
