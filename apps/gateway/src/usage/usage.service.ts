import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '#core/auth/caller.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { formatPico } from '#core/usage/money.js';
import { usageTotals, type UsageLine, type UsageQuery } from '#core/usage/usage-store.js';
import { ApiError } from '../common/api-error.js';
import { STORE } from '../infra/tokens.js';
import { requireAdmin } from '../admin/require-admin.js';
import { BadUsageQueryError, readUsageQuery, type ReadUsageQuery, type UsageQueryParams } from './usage-query.js';
import type { UsageReport, UsageSums } from './usage-view.dto.js';

/** A report, and whether it was asked for as CSV. */
export interface UsageAnswer {
  report: UsageReport;
  format: 'json' | 'csv';
}

/**
 * Usage reports from the calls' facts: a person's own, a tenant's for its admins, any tenant's
 * (or all of them) for operators.
 */
@Injectable()
export class UsageService {
  constructor(@Inject(STORE) private readonly store: ConversationStore) {}

  /** The caller's own calls. @throws ApiError 400 `invalid_usage_query`. */
  async own(caller: Caller, params: UsageQueryParams, accept?: string): Promise<UsageAnswer> {
    const query = read({ ...params, user_id: undefined }, accept);
    return this.answer({ ...query, userId: caller.userId }, caller.tenantId);
  }

  /**
   * A tenant's calls: an admin's own tenant, any (or, without `tenant_id`, every) tenant for an operator.
   * @throws ApiError 400 `invalid_usage_query`; 403 for a user, or an admin naming another tenant.
   */
  async tenant(caller: Caller, params: UsageQueryParams & { tenant_id?: string }, accept?: string): Promise<UsageAnswer> {
    requireAdmin(caller);
    const operator = caller.role === 'operator';
    if (!operator && params.tenant_id !== undefined && params.tenant_id !== caller.tenantId) {
      throw new ApiError(403, 'forbidden', "Only an operator sees another tenant's usage", { tenant_id: params.tenant_id });
    }
    const query = read(params, accept);
    return this.answer(query, operator ? params.tenant_id || undefined : caller.tenantId);
  }

  private async answer(query: ReadUsageQuery, tenantId: string | undefined): Promise<UsageAnswer> {
    const selection: UsageQuery = { from: query.from, to: query.to, groupBy: query.groupBy, ...(tenantId !== undefined ? { tenantId } : {}), ...(query.userId !== undefined ? { userId: query.userId } : {}), ...(query.model !== undefined ? { model: query.model } : {}) };
    const lines = await this.store.usage.report(selection);
    return {
      format: query.format,
      report: {
        from: query.from,
        to: query.to,
        group_by: query.groupBy,
        tenant_id: tenantId ?? null,
        user_id: query.userId ?? null,
        model: query.model ?? null,
        rows: lines.map((line) => ({ key: line.key, ...(line.tenantId !== undefined ? { tenant_id: line.tenantId } : {}), ...sums(line) })),
        totals: usageTotals(lines).map(sums),
      },
    };
  }
}

function read(params: UsageQueryParams, accept: string | undefined): ReadUsageQuery {
  try {
    return readUsageQuery(params, new Date(), accept);
  } catch (err) {
    if (err instanceof BadUsageQueryError) throw new ApiError(400, 'invalid_usage_query', err.message, { field: err.field });
    throw err;
  }
}

function sums(line: Omit<UsageLine, 'key' | 'tenantId'>): UsageSums {
  return {
    currency: line.currency,
    calls: line.calls,
    input_tokens: line.inputTokens,
    output_tokens: line.outputTokens,
    cached_input_tokens: line.cachedInputTokens,
    cost: formatPico(line.cost),
    estimated_calls: line.estimatedCalls,
  };
}
