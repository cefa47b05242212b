import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '#core/auth/caller.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { BudgetDirectory } from '#core/tenants/budget-directory.js';
import { EVERY_USER, type BudgetDefinition, type BudgetKey } from '#core/usage/budget.js';
import { budgetLines } from '#core/usage/budget-lines.js';
import type { BudgetPeriod } from '#core/usage/budget-period.js';
import type { BudgetMetric } from '#core/usage/call-budget.js';
import { BadAmountError, formatPico, microToPico, parseDecimal } from '#core/usage/money.js';
import { RedisRunBudgets } from '#transport/run-budgets.js';
import { ApiError } from '../common/api-error.js';
import { STORE } from '../infra/tokens.js';
import { requireAdmin } from './require-admin.js';
import type { BudgetDeleted, BudgetList, BudgetQueryDto, BudgetView, PutBudgetDto } from './budgets.dto.js';

/** The most tokens a budget may hold: what a Redis counter counts exactly. */
const MAX_TOKENS = BigInt(Number.MAX_SAFE_INTEGER);
/** The largest cost limit: 9 × 10^9 units, counted exactly in micro-units. */
const MAX_AMOUNT_MICROS = 9_000_000_000_000_000n;
const PERSON = /^[^\s:,]{1,128}$/;

/**
 * A tenant's budgets: admins set their tenant's, operators any tenant's. A change reaches every
 * gateway and worker within DATAAGENT_TENANT_CACHE_SECONDS; counts already made stand (a
 * lowered limit refuses the next call that does not fit).
 */
@Injectable()
export class BudgetsService {
  constructor(
    @Inject(STORE) private readonly store: ConversationStore,
    private readonly directory: BudgetDirectory,
    private readonly counters: RedisRunBudgets,
  ) {}

  /** @throws ApiError 403. */
  async list(caller: Caller, query: BudgetQueryDto): Promise<BudgetList> {
    const tenantId = tenantOf(caller, query.tenant_id);
    this.directory.forget(tenantId);
    const tenant = await this.directory.of(tenantId);
    const now = new Date();
    const views = await Promise.all(
      tenant.budgets.map(async (budget) => {
        const [line] = budgetLines([budget], budget.userId, tenant.timeZone, now);
        const counted = budget.userId === EVERY_USER ? undefined : (await this.counters.counts(tenantId, [line!]))[0];
        return view(budget, line!.window.resetsAt, counted);
      }),
    );
    return { tenant_id: tenantId, timezone: tenant.timeZone, budgets: views };
  }

  /** @throws ApiError 400 naming what is wrong, 403. */
  async put(caller: Caller, body: PutBudgetDto): Promise<BudgetView> {
    const key = keyOf(caller, body);
    const limit = limitOf(key.metric, body.limit);
    const stored = await this.store.budgets.put({ ...key, limit }, new Date());
    this.directory.forget(key.tenantId);
    const tenant = await this.directory.of(key.tenantId);
    const [line] = budgetLines([stored], stored.userId, tenant.timeZone, new Date());
    return view(stored, line!.window.resetsAt);
  }

  /** @throws ApiError 400, 403, 404. */
  async remove(caller: Caller, query: BudgetQueryDto): Promise<BudgetDeleted> {
    const key = keyOf(caller, query);
    if (!(await this.store.budgets.delete(key))) throw new ApiError(404, 'not_found', 'No such budget', { scope: key.scope, user_id: key.userId, metric: key.metric, period: key.period });
    this.directory.forget(key.tenantId);
    return { deleted: true };
  }
}

/** The tenant the caller acts on: an admin's own, or any an operator names. */
function tenantOf(caller: Caller, requested: unknown): string {
  requireAdmin(caller);
  if (requested === undefined || requested === caller.tenantId) return caller.tenantId;
  if (caller.role !== 'operator') throw new ApiError(403, 'operator_required', "Only an operator manages another tenant's budgets");
  if (typeof requested !== 'string' || !PERSON.test(requested)) throw bad('tenant_id must be a tenant id');
  return requested;
}

function keyOf(caller: Caller, body: { scope?: unknown; user_id?: unknown; metric?: unknown; period?: unknown; tenant_id?: unknown }): BudgetKey {
  const tenantId = tenantOf(caller, body.tenant_id);
  if (body.scope !== 'tenant' && body.scope !== 'user') throw bad('scope must be "tenant" or "user"');
  if (body.metric !== 'tokens' && body.metric !== 'cost') throw bad('metric must be "tokens" or "cost"');
  if (body.period !== 'day' && body.period !== 'month') throw bad('period must be "day" or "month"');
  let userId = '';
  if (body.scope === 'user') {
    if (typeof body.user_id !== 'string' || !(body.user_id === EVERY_USER || PERSON.test(body.user_id))) throw bad('a user budget needs user_id: a user id, or "*" for each user of the tenant');
    userId = body.user_id;
  } else if (body.user_id !== undefined && body.user_id !== '') {
    throw bad('a tenant budget has no user_id; use scope "user" for one person');
  }
  return { tenantId, scope: body.scope, userId, metric: body.metric as BudgetMetric, period: body.period as BudgetPeriod };
}

/** Tokens as a bigint, or a cost in pico-units. */
function limitOf(metric: BudgetMetric, value: unknown): bigint {
  if (metric === 'tokens') {
    const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : typeof value === 'string' ? value.trim() : '';
    if (!/^\d{1,16}$/.test(text) || BigInt(text) <= 0n || BigInt(text) > MAX_TOKENS) throw bad(`limit must be a whole number of tokens from 1 to ${MAX_TOKENS}`);
    return BigInt(text);
  }
  if (typeof value !== 'string' && typeof value !== 'number') throw bad('limit must be an amount such as "25.50"');
  let micros: bigint;
  try {
    micros = parseDecimal(value, 6);
  } catch (err) {
    if (err instanceof BadAmountError) throw bad(`limit: ${err.message}`);
    throw err;
  }
  if (micros <= 0n || micros > MAX_AMOUNT_MICROS) throw bad('limit must be more than 0 and at most 9000000000');
  return microToPico(Number(micros));
}

function bad(message: string): ApiError {
  return new ApiError(400, 'invalid_budget', message, {});
}

function view(b: BudgetDefinition, resetsAt: Date, counted?: { spent: number; reserved: number }): BudgetView {
  const amount = (n: number) => (b.metric === 'tokens' ? String(n) : formatPico(microToPico(n), 6));
  return {
    scope: b.scope,
    ...(b.scope === 'user' ? { user_id: b.userId } : {}),
    metric: b.metric,
    period: b.period,
    limit: b.metric === 'tokens' ? b.limit.toString() : formatPico(b.limit, 6),
    ...(counted ? { spent: amount(counted.spent), reserved: amount(counted.reserved) } : {}),
    resets_at: resetsAt.toISOString(),
    created_at: b.createdAt.toISOString(),
    updated_at: b.updatedAt.toISOString(),
  };
}
