import type { EventDict } from '../events/execution-event.js';
import { parsePico, type Pico } from './money.js';

/**
 * One model call as usage is summed: a `usage` event of a run's log with the run's owner. Its key
 * is (run, seq): a batch archived again, or a run continued by another worker that re-archives
 * its log, adds nothing.
 */
export interface UsageFact {
  runId: string;
  seq: number;
  tenantId: string;
  userId: string;
  assistantId: string;
  sessionId: string;
  model: string;
  /** The call's calendar date in UTC (`2026-12-08`). */
  day: string;
  occurredAt: Date;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  estimated: boolean;
  /** Exact, in pico-units of `currency`. */
  cost: Pico;
  currency: string;
}

/** Whose a run is: what a usage fact takes from the run's row. */
export type RunOwner = Pick<UsageFact, 'tenantId' | 'userId' | 'assistantId' | 'sessionId'>;

/** A run's `usage` events as facts, with the run's owner, in the order given; other events are left out. */
export function usageFactsOf(runId: string, events: readonly EventDict[], owner: RunOwner): UsageFact[] {
  const facts: UsageFact[] = [];
  for (const e of events) {
    if (e.event_type !== 'usage') continue;
    const occurredAt = new Date(e.timestamp);
    facts.push({
      runId,
      seq: e.seq,
      tenantId: owner.tenantId,
      userId: owner.userId,
      assistantId: owner.assistantId,
      sessionId: owner.sessionId,
      model: e.model,
      // UTC for now: a tenant's own time zone would move the day boundary of its reports.
      day: occurredAt.toISOString().slice(0, 10),
      occurredAt,
      inputTokens: e.input_tokens,
      outputTokens: e.output_tokens,
      cachedInputTokens: e.cached_input_tokens,
      estimated: e.estimated === true,
      cost: costOf(e.cost),
      currency: e.currency,
    });
  }
  return facts;
}

/**
 * A usage event's cost. Its worker wrote it with formatPico; should one ever not read, the call
 * still counts (at 0) rather than failing the archive write that carries the run's events.
 */
function costOf(text: string): Pico {
  try {
    return parsePico(text);
  } catch {
    return 0n;
  }
}

/** How usage is grouped: per calendar day (UTC), per person, or per model. */
export const USAGE_GROUPS = ['day', 'user', 'model'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

/** Which calls a report sums: `from` and `to` are UTC dates (`2026-12-01`), both included. */
export interface UsageQuery {
  /** Absent: every tenant (operators). */
  tenantId?: string;
  userId?: string;
  model?: string;
  from: string;
  to: string;
  groupBy: UsageGroup;
}

/** The sums of one group (and currency: a table whose currency changed keeps the two apart). */
export interface UsageLine {
  /** The day, the user id or the model, by the query's `groupBy`. */
  key: string;
  /** Grouped by user: the person's tenant (user ids are unique only within one). */
  tenantId?: string;
  currency: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cost: Pico;
  /** Calls whose figures are the tokenizer's estimate (the provider reported none). */
  estimatedCalls: number;
}

/** Usage per tenant, person, model and day, summed from the calls' facts. */
export interface UsageStore {
  /** Stores the facts, each (run, seq) once whatever is offered again. */
  record(facts: readonly UsageFact[]): Promise<void>;
  /** The query's groups by tenant (grouped by user), then key, then currency. */
  report(query: UsageQuery): Promise<UsageLine[]>;
}

/** The lines of a report summed per currency: its totals. */
export function usageTotals(lines: readonly UsageLine[]): Array<Omit<UsageLine, 'key' | 'tenantId'>> {
  const totals = new Map<string, Omit<UsageLine, 'key' | 'tenantId'>>();
  for (const line of lines) {
    const total = totals.get(line.currency) ?? { currency: line.currency, calls: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cost: 0n, estimatedCalls: 0 };
    total.calls += line.calls;
    total.inputTokens += line.inputTokens;
    total.outputTokens += line.outputTokens;
    total.cachedInputTokens += line.cachedInputTokens;
    total.cost += line.cost;
    total.estimatedCalls += line.estimatedCalls;
    totals.set(line.currency, total);
  }
  return [...totals.values()].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
}

/** The facts a query selects, summed into its groups: the memory store's report, and the meaning of the SQL one. */
export function sumUsage(facts: Iterable<UsageFact>, query: UsageQuery): UsageLine[] {
  const lines = new Map<string, UsageLine>();
  for (const f of facts) {
    if (query.tenantId !== undefined && f.tenantId !== query.tenantId) continue;
    if (query.userId !== undefined && f.userId !== query.userId) continue;
    if (query.model !== undefined && f.model !== query.model) continue;
    if (f.day < query.from || f.day > query.to) continue;
    const key = query.groupBy === 'day' ? f.day : query.groupBy === 'user' ? f.userId : f.model;
    const tenantId = query.groupBy === 'user' ? f.tenantId : undefined;
    const id = JSON.stringify([key, tenantId ?? '', f.currency]);
    const line = lines.get(id) ?? { key, ...(tenantId !== undefined ? { tenantId } : {}), currency: f.currency, calls: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cost: 0n, estimatedCalls: 0 };
    line.calls++;
    line.inputTokens += f.inputTokens;
    line.outputTokens += f.outputTokens;
    line.cachedInputTokens += f.cachedInputTokens;
    line.cost += f.cost;
    if (f.estimated) line.estimatedCalls++;
    lines.set(id, line);
  }
  return [...lines.values()].sort(compareLines);
}

/** Tenant order (grouped by user), then key order, then currency (byte order, as the SQL store's binary collation sorts). */
export function compareLines(a: UsageLine, b: UsageLine): number {
  for (const [x, y] of [
    [a.tenantId ?? '', b.tenantId ?? ''],
    [a.key, b.key],
    [a.currency, b.currency],
  ] as const) {
    if (x !== y) return Buffer.compare(Buffer.from(x), Buffer.from(y));
  }
  return 0;
}

/** Facts kept in this process (DATAAGENT_SESSION_STORE=memory). */
export class MemoryUsageStore implements UsageStore {
  private readonly facts = new Map<string, UsageFact>();

  async record(facts: readonly UsageFact[]): Promise<void> {
    for (const f of facts) {
      const key = `${f.runId}\u0000${f.seq}`;
      if (!this.facts.has(key)) this.facts.set(key, { ...f });
    }
  }

  async report(query: UsageQuery): Promise<UsageLine[]> {
    return sumUsage(this.facts.values(), query);
  }
}
