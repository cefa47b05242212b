import type { DataSource, EntityManager } from 'typeorm';
import type { EventDict } from '#core/events/execution-event.js';
import { formatPico, parsePico } from '#core/usage/money.js';
import { usageFactsOf, type RunOwner, type UsageFact, type UsageLine, type UsageQuery, type UsageStore } from '#core/usage/usage-store.js';
import { retryConflicts } from './retry-conflicts.js';

const FACT_COLUMNS = ['run_id', 'seq', 'tenant_id', 'user_id', 'assistant_id', 'session_id', 'model', 'day', 'occurred_at', 'input_tokens', 'output_tokens', 'cached_input_tokens', 'estimated', 'cost', 'currency'];

/** Rows of one multi-row INSERT: well under max_allowed_packet and the 65 535 placeholders of a statement. */
const FACTS_PER_STATEMENT = 2_000;

/** What each grouping selects and groups by. */
const GROUP_COLUMNS: Record<UsageQuery['groupBy'], string> = {
  day: "DATE_FORMAT(`day`, '%Y-%m-%d')",
  user: '`user_id`',
  model: '`model`',
};

/**
 * Usage per call in `usage_facts`, written with the run's events as they are archived (one
 * statement per flush), summed by the reports' queries.
 */
export class MysqlUsageStore implements UsageStore {
  constructor(private readonly dataSource: DataSource) {}

  async record(facts: readonly UsageFact[]): Promise<void> {
    for (let i = 0; i < facts.length; i += FACTS_PER_STATEMENT) await this.insert(this.dataSource.manager, facts.slice(i, i + FACTS_PER_STATEMENT));
  }

  /**
   * The `usage` events of archived batches as facts, each run's owner read once from `runs` (one
   * query for the flush); and the totals of the runs whose `done` is among them, set on their rows
   * in one statement. Each (run, seq) is stored once, so the events of a batch may be offered again.
   */
  async recordArchived(batches: ReadonlyArray<{ runId: string; events: readonly EventDict[] }>): Promise<void> {
    const metered = batches.filter((b) => b.events.some((e) => e.event_type === 'usage'));
    const ended = [...new Set(batches.filter((b) => b.events.some((e) => e.event_type === 'done')).map((b) => b.runId))];
    if (metered.length > 0) {
      const owners = await this.owners([...new Set(metered.map((b) => b.runId))]);
      // A run without a row (its session was deleted meanwhile) has nobody to count it for.
      const facts = metered.flatMap((b) => {
        const owner = owners.get(b.runId);
        return owner ? usageFactsOf(b.runId, b.events, owner) : [];
      });
      await retryConflicts(() => this.record(facts));
    }
    if (ended.length > 0) await retryConflicts(() => this.setRunTotals(ended));
  }

  async report(query: UsageQuery): Promise<UsageLine[]> {
    const where = ['`day` BETWEEN ? AND ?'];
    const parameters: unknown[] = [query.from, query.to];
    if (query.tenantId !== undefined) {
      where.unshift('`tenant_id` = ?');
      parameters.unshift(query.tenantId);
    }
    if (query.userId !== undefined) {
      where.push('`user_id` = ?');
      parameters.push(query.userId);
    }
    if (query.model !== undefined) {
      where.push('`model` = ?');
      parameters.push(query.model);
    }
    const key = GROUP_COLUMNS[query.groupBy];
    const tenant = query.groupBy === 'user' ? '`tenant_id`' : "''";
    const rows: Array<Record<string, string | number>> = await this.dataSource.query(
      `SELECT ${key} AS k, ${tenant} AS tenant, \`currency\` AS currency, COUNT(*) AS calls,
              SUM(\`input_tokens\`) AS input_tokens, SUM(\`output_tokens\`) AS output_tokens, SUM(\`cached_input_tokens\`) AS cached_input_tokens,
              SUM(\`cost\`) AS cost, SUM(\`estimated\`) AS estimated_calls
         FROM \`usage_facts\` WHERE ${where.join(' AND ')}
        GROUP BY tenant, k, currency ORDER BY tenant, k, currency`,
      parameters,
    );
    return rows.map((r) => ({
      key: String(r.k),
      ...(query.groupBy === 'user' ? { tenantId: String(r.tenant) } : {}),
      currency: String(r.currency),
      calls: Number(r.calls),
      inputTokens: Number(r.input_tokens),
      outputTokens: Number(r.output_tokens),
      cachedInputTokens: Number(r.cached_input_tokens),
      // DECIMAL comes back as its exact text.
      cost: parsePico(String(r.cost)),
      estimatedCalls: Number(r.estimated_calls),
    }));
  }

  private async owners(runIds: string[]): Promise<Map<string, RunOwner>> {
    const rows: Array<{ run_id: string; tenant_id: string; user_id: string; assistant_id: string; session_id: string }> = await this.dataSource.query(
      'SELECT run_id, tenant_id, user_id, assistant_id, session_id FROM runs WHERE run_id IN (?)',
      [runIds],
    );
    return new Map(rows.map((r) => [r.run_id, { tenantId: r.tenant_id, userId: r.user_id, assistantId: r.assistant_id, sessionId: r.session_id }]));
  }

  private async insert(manager: EntityManager, facts: readonly UsageFact[]): Promise<void> {
    if (facts.length === 0) return;
    const row = `(${FACT_COLUMNS.map(() => '?').join(', ')})`;
    // A model id longer than the column is cut rather than failing the flush that carries the run's events.
    const values = facts.flatMap((f) => [f.runId, f.seq, f.tenantId, f.userId, f.assistantId, f.sessionId, f.model.slice(0, 200), f.day, f.occurredAt, f.inputTokens, f.outputTokens, f.cachedInputTokens, f.estimated ? 1 : 0, formatPico(f.cost), f.currency]);
    // A fact stored already (the batch was archived before) stays as it is.
    await manager.query(
      `INSERT INTO \`usage_facts\` (${FACT_COLUMNS.map((c) => `\`${c}\``).join(', ')}) VALUES ${facts.map(() => row).join(', ')} ON DUPLICATE KEY UPDATE \`run_id\` = \`run_id\``,
      values,
    );
  }

  /** The runs' totals from their facts (0 for a run that made no call), in one statement. */
  private async setRunTotals(runIds: string[]): Promise<void> {
    await this.dataSource.query(
      `UPDATE \`runs\` r LEFT JOIN (
         SELECT \`run_id\`, SUM(\`input_tokens\`) AS i, SUM(\`output_tokens\`) AS o, SUM(\`cost\`) AS c FROM \`usage_facts\` WHERE \`run_id\` IN (?) GROUP BY \`run_id\`
       ) u ON u.\`run_id\` = r.\`run_id\`
       SET r.\`input_tokens\` = COALESCE(u.i, 0), r.\`output_tokens\` = COALESCE(u.o, 0), r.\`cost\` = COALESCE(u.c, 0)
       WHERE r.\`run_id\` IN (?)`,
      [runIds, runIds],
    );
  }
}
