import { amountOf, budgetLines, exhaustionOf, lineClaim, maxOutputWithin, spentOn, type BudgetLine } from '../../usage/budget-lines.js';
import type { CallClaim, CallGrant, CallSpend, ModelCallBudget } from '../../usage/call-budget.js';
import type { BudgetedRun, RunBudgets, RunRef } from '../run-ports.js';

/** One budget's count for one period: settled spend, and the reservations held on it by field. */
interface Counter {
  spent: number;
  held: Map<string, number>;
}

/**
 * The memory twin of the Redis budgets (libs/transport/src/run-budgets.ts): the same arithmetic
 * (budget-lines.ts), counters per budget and period, each run's reservations listed so they can
 * be given back. One process only: for the lifecycle's specs and the run ports' contract.
 */
export class MemoryRunBudgets implements RunBudgets {
  private readonly counters = new Map<string, Counter>();
  /** Each run's reservations, as `counter\nfield`. */
  private readonly runs = new Map<string, Set<string>>();

  forRun(run: BudgetedRun): ModelCallBudget {
    return new MemoryCallBudget(this, run);
  }

  async release(run: Pick<RunRef, 'runId' | 'tenantId'>): Promise<number> {
    const held = this.runs.get(run.runId);
    this.runs.delete(run.runId);
    let released = 0;
    for (const member of held ?? []) {
      const [counter, field] = member.split('\n') as [string, string];
      if (this.counters.get(counter)?.held.delete(field)) released++;
    }
    return released;
  }

  /** What a counter has spent and holds, by the names the Redis adapter gives it. */
  count(tenantId: string, line: BudgetLine): { spent: number; reserved: number } {
    const counter = this.counters.get(counterOf(tenantId, line));
    return { spent: counter?.spent ?? 0, reserved: [...(counter?.held.values() ?? [])].reduce((a, b) => a + b, 0) };
  }

  /** @internal */
  reserve(run: BudgetedRun, lines: readonly BudgetLine[], field: string, claim: CallClaim): CallGrant {
    const claims = lines.map((line) => lineClaim(line, claim, run.prices));
    const counters = lines.map((line) => this.counter(counterOf(run.tenantId, line)));
    let granted = claim.maxOutputTokens;
    let tightest = -1;
    const used = counters.map((c) => c.spent + [...c.held].reduce((sum, [f, amount]) => sum + (f === field ? 0 : amount), 0));
    for (const [i, line] of lines.entries()) {
      const out = maxOutputWithin(claims[i]!, line.limit - used[i]!, line.scale, claim.maxOutputTokens);
      if (out < 0) return { granted: false, exhausted: exhaustionOf(line, used[i]!, run.prices.currency) };
      if (out < granted) [granted, tightest] = [out, i];
    }
    const list = this.runs.get(run.runId) ?? new Set<string>();
    this.runs.set(run.runId, list);
    for (const [i, line] of lines.entries()) {
      counters[i]!.held.set(field, amountOf(claims[i]!, granted, line.scale));
      list.add(`${counterOf(run.tenantId, line)}\n${field}`);
    }
    if (tightest < 0) return { granted: true, maxOutputTokens: granted };
    const line = lines[tightest]!;
    return { granted: true, maxOutputTokens: granted, limitedBy: exhaustionOf(line, used[tightest]! + amountOf(claims[tightest]!, granted, line.scale), run.prices.currency) };
  }

  /** @internal */
  settle(run: BudgetedRun, lines: readonly BudgetLine[], field: string, spent: CallSpend): void {
    for (const line of lines) {
      const name = counterOf(run.tenantId, line);
      const counter = this.counter(name);
      counter.held.delete(field);
      counter.spent += spentOn(line, spent);
      this.runs.get(run.runId)?.delete(`${name}\n${field}`);
    }
  }

  private counter(name: string): Counter {
    let counter = this.counters.get(name);
    if (!counter) {
      counter = { spent: 0, held: new Map() };
      this.counters.set(name, counter);
    }
    return counter;
  }
}

class MemoryCallBudget implements ModelCallBudget {
  private readonly calls = new Map<number, BudgetLine[]>();

  constructor(
    private readonly budgets: MemoryRunBudgets,
    private readonly run: BudgetedRun,
  ) {}

  async reserve(claim: CallClaim): Promise<CallGrant> {
    const lines = budgetLines(this.run.budgets, this.run.userId, this.run.timeZone, (this.run.now ?? (() => new Date()))());
    const grant = this.budgets.reserve(this.run, lines, `${this.run.runId}:${claim.call}`, claim);
    if (grant.granted) this.calls.set(claim.call, lines);
    return grant;
  }

  async settle(call: number, spent: CallSpend): Promise<void> {
    const lines = this.calls.get(call);
    if (!lines) return;
    this.calls.delete(call);
    this.budgets.settle(this.run, lines, `${this.run.runId}:${call}`, spent);
  }
}

function counterOf(tenantId: string, line: BudgetLine): string {
  return [tenantId, line.budget.metric, line.budget.period, line.window.key, line.subject].join('\u0000');
}
