import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '#core/auth/caller.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { pricesOf, type PricesInForce } from '#core/usage/price-directory.js';
import type { PriceChange } from '#core/usage/price-store.js';
import { BadPriceTableError, PriceTable } from '#core/usage/price-table.js';
import { environmentPrices } from '#core/usage/pricing-config.js';
import { ApiError } from '../common/api-error.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { SETTINGS, STORE } from '../infra/tokens.js';
import { requireAdmin } from './require-admin.js';
import type { PriceChangeList, PriceChangeQueryDto, PriceChangeView, PricesView, PriceTableDto } from './prices.dto.js';

/**
 * The price table model calls are priced from. Operators replace it (stored in MySQL, it wins
 * over DATAAGENT_MODEL_PRICES), and every change is recorded: who, when, from what to what.
 * Workers apply a change within DATAAGENT_PRICES_CACHE_SECONDS; calls made before keep the cost
 * they were recorded with.
 */
@Injectable()
export class PricesService {
  private readonly environment: PricesInForce;

  constructor(
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
    @Inject(STORE) private readonly store: ConversationStore,
  ) {
    this.environment = environmentPrices(settings.pricing);
  }

  /** The table in force. @throws ApiError 403 unless an admin or operator. */
  async current(caller: Caller): Promise<PricesView> {
    requireAdmin(caller);
    const stored = await this.store.prices.current();
    return view(stored ? pricesOf(stored) : this.environment);
  }

  /** Replaces the table. @throws ApiError 403 unless an operator; 400 `invalid_price_table` with what is wrong. */
  async replace(caller: Caller, body: PriceTableDto): Promise<PricesView> {
    operatorOnly(caller, 'Only an operator sets the prices');
    let table: PriceTable;
    try {
      table = PriceTable.parse(body.prices, body.currency ?? this.settings.pricing.currency);
    } catch (err) {
      if (err instanceof BadPriceTableError) throw new ApiError(400, 'invalid_price_table', err.message, {});
      throw err;
    }
    const change = await this.store.prices.replace({ prices: table.toJSON(), currency: table.currency, updatedAt: new Date(), updatedBy: `${caller.tenantId}/${caller.userId}` });
    return view({ table, source: 'database', updatedAt: change.changedAt, updatedBy: change.changedBy });
  }

  /** Replacements, newest first. @throws ApiError 403 unless an operator. */
  async changes(caller: Caller, query: PriceChangeQueryDto): Promise<PriceChangeList> {
    operatorOnly(caller, 'Only an operator reads the price changes');
    const changes = await this.store.prices.changes({ limit: query.limit, offset: query.offset });
    return { changes: changes.map(changeView), limit: query.limit, offset: query.offset };
  }
}

function operatorOnly(caller: Caller, message: string): void {
  if (caller.role !== 'operator') throw new ApiError(403, 'operator_required', message);
}

function view(prices: PricesInForce): PricesView {
  return {
    source: prices.source,
    currency: prices.table.currency,
    prices: prices.table.toJSON(),
    updated_at: prices.updatedAt?.toISOString() ?? null,
    updated_by: prices.updatedBy ?? null,
  };
}

function changeView(change: PriceChange): PriceChangeView {
  return { id: change.id, changed_at: change.changedAt.toISOString(), changed_by: change.changedBy, before: change.before, after: change.after };
}
