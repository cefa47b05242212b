import { Inject, Injectable } from '@nestjs/common';
import type { RedisClient } from '#transport/redis-connection.js';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Caller } from '#core/auth/caller.js';
import type { ConversationStore } from '#core/session/session-store.js';
import type { TenantDirectory } from '#core/tenants/tenant-directory.js';
import { Metrics } from '#telemetry/metrics.js';
import { TenantRunSlots } from '#transport/tenant-run-slots.js';
import { RedisRunBudgets, spentBudget } from '#transport/run-budgets.js';
import { BudgetDirectory } from '#core/tenants/budget-directory.js';
import { budgetsFor } from '#core/usage/budget.js';
import { budgetLines, exhaustionOf } from '#core/usage/budget-lines.js';
import { describeBudget } from '#core/engine/agent-executor.js';
import { PriceTable } from '#core/usage/price-table.js';
import { redisKeys } from '#transport/redis-keys.js';
import { ApiError } from '../common/api-error.js';
import { REDIS, STORE, TENANTS } from '../infra/tokens.js';

/**
 * Per-key, per-user and per-tenant limits, shared by every gateway: requests per minute per
 * API key (rate-limiter-flexible's fixed window on Redis), runs going at once per tenant (slots
 * in Redis taken atomically) and sessions per user (counted in the store). Each limit is the tenant's own in multi-tenant mode,
 * the environment's otherwise. Over a limit the answer is 429 with Retry-After and an
 * error_code that names it. A limit of 0 is off.
 */
@Injectable()
export class Quotas {
  /** One limiter per rate: a tenant's own requests_per_minute gets its own. */
  private readonly limiters = new Map<number, RateLimiterRedis>();
  private readonly runSlots: TenantRunSlots;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(STORE) private readonly store: ConversationStore,
    @Inject(TENANTS) private readonly tenants: TenantDirectory,
    private readonly metrics: Metrics,
    private readonly budgets: BudgetDirectory,
    private readonly budgetCounters: RedisRunBudgets,
  ) {
    this.runSlots = new TenantRunSlots(redis);
  }

  /**
   * Before a run is created, takes one of the tenant's run slots: a tenant at its limit gets 429
   * rather than queueing ahead of other tenants, however many chats arrive at once on however
   * many gateways. The run lifecycle gives the slot back when the run ends, or is never queued. A tenant that looks full first has slots of runs that ended without
   * giving theirs back pruned against the store.
   * @throws ApiError 429 `tenant_run_limit` at the tenant's max_concurrent_runs.
   */
  async admitRun(caller: Caller, runId: string): Promise<void> {
    const max = (await this.tenants.policy(caller.tenantId)).limits.maxConcurrentRuns;
    if (max <= 0) return;
    let held = await this.runSlots.take(caller.tenantId, runId, max);
    if (held !== null && (await this.runSlots.prune(caller.tenantId, Date.now() - SLOT_PRUNE_AFTER_MS, (ids) => this.store.runs.activeAmong(ids))) > 0) {
      held = await this.runSlots.take(caller.tenantId, runId, max);
    }
    this.metrics.tenantRunSlots.labels(held === null ? 'granted' : 'refused').inc();
    if (held === null) return;
    throw tooMany('tenant_run_limit', `Your organisation has ${held} runs going, its most at once; retry when one ends`, 'concurrent_runs_per_tenant', max, 5);
  }

  /**
   * Before a run is created: a budget of the caller's tenant, or of the caller, that is spent
   * refuses it, until the budget's period starts again. A tenant without budgets costs nothing
   * more than its cached read. (Calls of runs already going are held to the budgets by their
   * reservations: this only spares a run that could not make one call.)
   * @throws ApiError 429 `budget_exhausted` with the budget, what is spent, and when it resets (Retry-After).
   */
  async admitBudgets(caller: Caller, now = new Date()): Promise<void> {
    // Budgets that cannot be read (the database is down, and this gateway never read them) admit
    // the run: its calls are still held to the budgets by the worker's reservations once it reads them.
    const tenant = await this.budgets.of(caller.tenantId).catch(() => undefined);
    if (!tenant) return;
    const budgets = budgetsFor(tenant.budgets, caller.userId);
    if (budgets.length === 0) return;
    const spent = spentBudget(await this.budgetCounters.counts(caller.tenantId, budgetLines(budgets, caller.userId, tenant.timeZone, now)));
    if (!spent) return;
    // Gateways hold no price table: a cost budget is shown in the default currency.
    const exhausted = exhaustionOf(spent.line, spent.spent, PriceTable.EMPTY.currency);
    const { scope, metric, period, limit } = exhausted;
    const retryAfter = Math.max(1, Math.ceil((spent.line.window.resetsAt.getTime() - now.getTime()) / 1000));
    throw new ApiError(
      429,
      'budget_exhausted',
      describeBudget(exhausted),
      { budget: { scope, metric, period, limit, ...(exhausted.currency ? { currency: exhausted.currency } : {}) }, spent: exhausted.spent, resets_at: exhausted.resets_at },
      { 'Retry-After': String(retryAfter) },
    );
  }

  /** Counts one request of the caller's key. @throws ApiError 429 `rate_limited` past the tenant's requests_per_minute. */
  async countRequest(caller: Caller): Promise<void> {
    const points = (await this.tenants.policy(caller.tenantId)).limits.requestsPerMinute;
    if (points <= 0) return;
    try {
      await this.limiter(points).consume(caller.keyId ?? `${caller.tenantId}/${caller.userId}`);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      const retryAfter = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      throw tooMany('rate_limited', `More than ${points} requests a minute with this API key; retry in ${retryAfter} s`, 'requests_per_minute', points, retryAfter);
    }
  }

  /** Before a new session. @throws ApiError 429 `session_limit` when the user has the tenant's max_sessions_per_user already. */
  async admitSession(caller: Caller): Promise<void> {
    const max = (await this.tenants.policy(caller.tenantId)).limits.maxSessionsPerUser;
    if (max <= 0) return;
    const existing = await this.store.sessions.listByUser(caller.tenantId, caller.userId, { limit: max, offset: 0 });
    if (existing.length < max) return;
    throw tooMany('session_limit', `You have ${max} sessions, the most a user may keep; delete one (or wait until one expires) to start another`, 'sessions_per_user', max, 60);
  }

  /** How many MCP servers of their own a user of this tenant may keep. */
  async maxMcpServers(tenantId: string): Promise<number> {
    return (await this.tenants.policy(tenantId)).limits.maxMcpServers;
  }

  /**
   * Before a key for `userId` is issued: a tenant at max_users gets no key for a new user.
   * Counts distinct users with live (unrevoked, unexpired) issued keys.
   * @throws ApiError 429 `user_limit`.
   */
  async admitUser(tenantId: string, userId: string): Promise<void> {
    const max = (await this.tenants.policy(tenantId)).limits.maxUsers;
    if (max <= 0) return;
    const users = await this.store.apiKeys.liveUsers(tenantId, new Date());
    if (users.includes(userId) || users.length < max) return;
    throw tooMany('user_limit', `The organisation has ${users.length} users with keys, its most; revoke a user's keys first`, 'users_per_tenant', max, 60);
  }

  private limiter(points: number): RateLimiterRedis {
    let limiter = this.limiters.get(points);
    if (!limiter) {
      limiter = new RateLimiterRedis({ storeClient: this.redis, keyPrefix: redisKeys.quotaRequestsPerMinutePrefix, points, duration: 60 });
      this.limiters.set(points, limiter);
    }
    return limiter;
  }
}

/** Slots younger than this are never pruned: their runs may not be stored yet. */
const SLOT_PRUNE_AFTER_MS = 30_000;

/** 429 naming the limit, its size and when to try again. */
export function tooMany(code: string, message: string, limit: string, max: number, retryAfterSeconds: number): ApiError {
  return new ApiError(429, code, message, { limit, max }, { 'Retry-After': String(retryAfterSeconds) });
}
