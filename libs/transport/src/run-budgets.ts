import type { BudgetedRun, RunBudgets, RunRef } from '#core/run/run-ports.js';
import { budgetLines, exhaustionOf, lineClaim, spentOn, type BudgetLine } from '#core/usage/budget-lines.js';
import { MIN_OUTPUT_TOKENS, type BudgetExhaustion, type CallClaim, type CallGrant, type CallSpend, type ModelCallBudget } from '#core/usage/call-budget.js';
import type { RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';
import { luaScript } from './lua/lua-scripts.js';

type ReserveCommand = (...args: Array<string | number>) => Promise<[number, number, number, string?]>;
type SettleCommand = (...args: Array<string | number>) => Promise<number>;
type ReleaseCommand = (...args: string[]) => Promise<number>;

interface BudgetCommands {
  budgetReserve: ReserveCommand;
  budgetSettle: SettleCommand;
  budgetRelease: ReleaseCommand;
}

const DAY_MS = 86_400_000;
/** A run's list of reservations outlives any run (a run's ledger keeps 24 h). */
const RUN_LIST_MS = 2 * DAY_MS;

/** A budget's counter for a period as the gateway reads it: its settled spend, what calls hold now, and what the last call it refused needed. */
export interface BudgetCount {
  line: BudgetLine;
  spent: number;
  reserved: number;
  refused?: number;
}

/**
 * Tenants' and people's budgets in Redis, shared by every worker and gateway: each model call
 * reserves its worst case on all of its run's budgets at once (one script), or on none, and
 * settles to what it spent. Counters live per budget and period and expire a day after it.
 *
 * A counter that is missing (a new period, or Redis lost it) starts at 0: the usage facts in
 * MySQL are the durable record, and Redis holds only the running count.
 */
export class RedisRunBudgets implements RunBudgets {
  constructor(private readonly redis: RedisClient) {
    const r = redis as unknown as Partial<BudgetCommands>;
    if (!r.budgetReserve) redis.defineCommand('budgetReserve', { lua: luaScript('budget-reserve') });
    if (!r.budgetSettle) redis.defineCommand('budgetSettle', { lua: luaScript('budget-settle') });
    if (!r.budgetRelease) redis.defineCommand('budgetRelease', { lua: luaScript('budget-release') });
  }

  private get commands(): BudgetCommands {
    return this.redis as unknown as BudgetCommands;
  }

  forRun(run: BudgetedRun): ModelCallBudget {
    return new RedisModelCallBudget(this, run);
  }

  async release(run: Pick<RunRef, 'runId' | 'tenantId'>): Promise<number> {
    const list = redisKeys.budgetRunReservations(run.tenantId, run.runId);
    const members = await this.redis.smembers(list);
    if (members.length === 0) return 0;
    const counters = [...new Set(members.map((m) => m.slice(0, m.indexOf('\n'))))];
    return this.commands.budgetRelease(String(1 + counters.length), list, ...counters);
  }

  /** The counters of `lines` now: what the gateway checks before it admits a run. */
  async counts(tenantId: string, lines: readonly BudgetLine[]): Promise<BudgetCount[]> {
    if (lines.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const line of lines) pipeline.hmget(counterOf(tenantId, line), 'spent', 'reserved', 'refused');
    const replies = (await pipeline.exec()) ?? [];
    return lines.map((line, i) => {
      const [err, values] = replies[i] ?? [null, [null, null]];
      if (err) throw err;
      const [spent, reserved, refused] = values as [string | null, string | null, string | null];
      return { line, spent: Number(spent ?? 0), reserved: Number(reserved ?? 0), ...(refused === null ? {} : { refused: Number(refused) }) };
    });
  }

  /** @internal One call's reservation on its lines. */
  async reserve(run: BudgetedRun, lines: readonly BudgetLine[], field: string, claim: CallClaim): Promise<[number, number, number, string?]> {
    const now = (run.now ?? (() => new Date()))().getTime();
    const args: Array<string | number> = [lines.length + 1, ...lines.map((l) => counterOf(run.tenantId, l)), redisKeys.budgetRunReservations(run.tenantId, run.runId)];
    args.push(field, claim.maxOutputTokens, MIN_OUTPUT_TOKENS, now + RUN_LIST_MS);
    for (const line of lines) {
      const { input, perOutput } = lineClaim(line, claim, run.prices);
      args.push(line.limit, input, perOutput, line.scale, line.window.resetsAt.getTime() + DAY_MS);
    }
    return this.commands.budgetReserve(...args);
  }

  /** @internal Settles one call's reservation on its lines. */
  async settle(run: BudgetedRun, lines: readonly BudgetLine[], field: string, amounts: number[]): Promise<void> {
    await this.commands.budgetSettle(lines.length + 1, ...lines.map((l) => counterOf(run.tenantId, l)), redisKeys.budgetRunReservations(run.tenantId, run.runId), field, ...amounts);
  }
}

/** One run's calls on its budgets: each reserves on every budget that applies to it, atomically, and settles after. */
export class RedisModelCallBudget implements ModelCallBudget {
  /** Each call's lines as it reserved them: it settles in the period it reserved in, even across midnight. */
  private readonly calls = new Map<number, BudgetLine[]>();

  constructor(
    private readonly budgets: RedisRunBudgets,
    private readonly run: BudgetedRun,
  ) {}

  async reserve(claim: CallClaim): Promise<CallGrant> {
    const { run } = this;
    const lines = budgetLines(run.budgets, run.userId, run.timeZone, (run.now ?? (() => new Date()))());
    if (lines.length === 0) return { granted: true, maxOutputTokens: claim.maxOutputTokens };
    const [ok, value, index, used] = await this.budgets.reserve(run, lines, fieldOf(run.runId, claim.call), claim);
    if (ok !== 1) return { granted: false, exhausted: this.exhaustion(lines[value - 1]!, Number(index)) };
    this.calls.set(claim.call, lines);
    return { granted: true, maxOutputTokens: value, ...(value < claim.maxOutputTokens ? { limitedBy: this.exhaustion(lines[index - 1]!, Number(used)) } : {}) };
  }

  async settle(call: number, spent: CallSpend): Promise<void> {
    const lines = this.calls.get(call);
    if (!lines) return;
    this.calls.delete(call);
    await this.budgets.settle(this.run, lines, fieldOf(this.run.runId, call), lines.map((line) => spentOn(line, spent)));
  }

  private exhaustion(line: BudgetLine, used: number): BudgetExhaustion {
    return exhaustionOf(line, used, this.run.prices.currency);
  }
}

function counterOf(tenantId: string, line: BudgetLine): string {
  return redisKeys.budgetCounter(tenantId, line.budget.metric, line.budget.period, line.window.key, line.subject);
}

function fieldOf(runId: string, call: number): string {
  return `${runId}:${call}`;
}

/**
 * The first of the budgets that is spent: what its settled spend leaves cannot hold the fewest
 * tokens a call may ask (a cost budget: nothing is left), or not even the call it last refused,
 * were every call under way to give its reservation back. Such a budget refuses every run until
 * its period ends (or its limit is raised); a budget only held by calls under way does not.
 */
export function spentBudget(counts: readonly BudgetCount[]): BudgetCount | undefined {
  return counts.find(({ line, spent, refused }) => {
    const left = line.limit - spent;
    return (line.budget.metric === 'tokens' ? left < MIN_OUTPUT_TOKENS : left <= 0) || (refused !== undefined && left < refused);
  });
}
