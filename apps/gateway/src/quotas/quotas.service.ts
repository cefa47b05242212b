import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Caller } from '#core/session/caller.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { ApiError } from '../common/api-error.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { REDIS, SETTINGS, STORE } from '../infra/tokens.js';

/**
 * Per-key, per-user and per-tenant limits, shared by every gateway: requests per minute per
 * API key (rate-limiter-flexible's fixed window on Redis), sessions per user and runs going at
 * once per tenant (counted in the store). Over a limit the answer
 * is 429 with Retry-After and an error_code that names it. A limit of 0 is off.
 */
@Injectable()
export class Quotas {
  private readonly perMinute?: RateLimiterRedis;
  private readonly maxSessionsPerUser: number;
  private readonly maxRunsPerTenant: number;

  constructor(
    @Inject(SETTINGS) settings: GatewaySettings,
    @Inject(REDIS) redis: Redis,
    @Inject(STORE) private readonly store: ConversationStore,
  ) {
    const { requestsPerMinute, maxSessionsPerUser } = settings.server;
    if (requestsPerMinute > 0) this.perMinute = new RateLimiterRedis({ storeClient: redis, keyPrefix: 'da:quota:rpm', points: requestsPerMinute, duration: 60 });
    this.maxSessionsPerUser = maxSessionsPerUser;
    this.maxRunsPerTenant = settings.server.maxConcurrentRunsPerTenant;
  }

  /**
   * Before a run is created: a tenant at its limit gets 429 rather than queueing ahead of other
   * tenants. Gateways admitting at the same moment may let one or two more through.
   * @throws ApiError 429 `tenant_run_limit` at DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT.
   */
  async admitRun(caller: Caller): Promise<void> {
    if (this.maxRunsPerTenant <= 0) return;
    const active = await this.store.runs.countActiveByTenant(caller.tenantId);
    if (active < this.maxRunsPerTenant) return;
    throw new ApiError(
      429,
      'tenant_run_limit',
      `Your organisation has ${active} runs going, its most at once; retry when one ends`,
      { limit: 'concurrent_runs_per_tenant', max: this.maxRunsPerTenant },
      { 'Retry-After': '5' },
    );
  }

  /** Counts one request of the caller's key. @throws ApiError 429 `rate_limited` past DATAAGENT_REQUESTS_PER_MINUTE. */
  async countRequest(caller: Caller): Promise<void> {
    if (!this.perMinute) return;
    try {
      await this.perMinute.consume(caller.keyId ?? `${caller.tenantId}/${caller.userId}`);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      const retryAfter = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      throw new ApiError(429, 'rate_limited', `More than ${this.perMinute.points} requests a minute with this API key; retry in ${retryAfter} s`, { limit: 'requests_per_minute', max: this.perMinute.points }, { 'Retry-After': String(retryAfter) });
    }
  }

  /** Before a new session. @throws ApiError 429 `session_limit` when the user has DATAAGENT_MAX_SESSIONS_PER_USER already. */
  async admitSession(caller: Caller): Promise<void> {
    if (this.maxSessionsPerUser <= 0) return;
    const existing = await this.store.sessions.listByUser(caller.tenantId, caller.userId, { limit: this.maxSessionsPerUser, offset: 0 });
    if (existing.length < this.maxSessionsPerUser) return;
    throw new ApiError(
      429,
      'session_limit',
      `You have ${this.maxSessionsPerUser} sessions, the most a user may keep; delete one (or wait until one expires) to start another`,
      { limit: 'sessions_per_user', max: this.maxSessionsPerUser },
      { 'Retry-After': '60' },
    );
  }
}
