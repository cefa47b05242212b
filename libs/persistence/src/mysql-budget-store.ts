import type { DataSource } from 'typeorm';
import type { BudgetDefinition, BudgetKey, BudgetStore } from '#core/usage/budget.js';
import { formatPico, parsePico } from '#core/usage/money.js';

interface BudgetRow {
  tenant_id: string;
  scope: BudgetDefinition['scope'];
  user_id: string;
  metric: BudgetDefinition['metric'];
  period: BudgetDefinition['period'];
  limit_tokens: string | number | null;
  limit_amount: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'tenant_id, scope, user_id, metric, period, limit_tokens, limit_amount, created_at, updated_at';

/** Tenants' budgets in `budgets`: a token limit as BIGINT, a cost limit as an exact DECIMAL(30,12). */
export class MysqlBudgetStore implements BudgetStore {
  constructor(private readonly dataSource: DataSource) {}

  async list(tenantId: string): Promise<BudgetDefinition[]> {
    const rows = (await this.dataSource.query(`SELECT ${COLUMNS} FROM budgets WHERE tenant_id = ? ORDER BY scope, user_id, metric, period`, [tenantId])) as BudgetRow[];
    return rows.map(toDefinition);
  }

  async put(budget: Omit<BudgetDefinition, 'createdAt' | 'updatedAt'>, at: Date): Promise<BudgetDefinition> {
    const tokens = budget.metric === 'tokens' ? budget.limit.toString() : null;
    const amount = budget.metric === 'cost' ? formatPico(budget.limit) : null;
    await this.dataSource.query(
      `INSERT INTO budgets (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE limit_tokens = VALUES(limit_tokens), limit_amount = VALUES(limit_amount), updated_at = VALUES(updated_at)`,
      [budget.tenantId, budget.scope, budget.userId, budget.metric, budget.period, tokens, amount, at, at],
    );
    const rows = (await this.dataSource.query(`SELECT ${COLUMNS} FROM budgets WHERE tenant_id = ? AND scope = ? AND user_id = ? AND metric = ? AND period = ?`, keyParams(budget))) as BudgetRow[];
    return toDefinition(rows[0]!);
  }

  async delete(key: BudgetKey): Promise<boolean> {
    const result = (await this.dataSource.query('DELETE FROM budgets WHERE tenant_id = ? AND scope = ? AND user_id = ? AND metric = ? AND period = ?', keyParams(key))) as { affectedRows?: number };
    return (result.affectedRows ?? 0) > 0;
  }
}

function keyParams(key: BudgetKey): string[] {
  return [key.tenantId, key.scope, key.userId, key.metric, key.period];
}

function toDefinition(row: BudgetRow): BudgetDefinition {
  return {
    tenantId: row.tenant_id,
    scope: row.scope,
    userId: row.user_id,
    metric: row.metric,
    period: row.period,
    limit: row.metric === 'tokens' ? BigInt(String(row.limit_tokens ?? 0)) : parsePico(String(row.limit_amount ?? '0')),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
