import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '#core/auth/caller.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { TenantExistsError, type TenantFeatures, type TenantRecord, type TenantUpdate } from '#core/tenants/tenant.js';
import type { TenantDirectory } from '#core/tenants/tenant-directory.js';
import { parseByteSize } from '#core/config/byte-size.js';
import { isTimeZone } from '#core/usage/budget-period.js';
import { ApiKeyService } from '../auth/api-key.service.js';
import { ApiError } from '../common/api-error.js';
import { invalidFields } from '../common/validation.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { SETTINGS, STORE, TENANTS } from '../infra/tokens.js';
import type { CreateTenantDto, TenantQueryDto, TenantSettingsDto } from './tenants.dto.js';
import type { TenantDeleted, TenantList, TenantView } from './tenant-view.dto.js';

/**
 * Tenants' limits and feature switches, for operators only (a tenant's admin must not raise its own limits). A change reaches every
 * gateway and worker within DATAAGENT_TENANT_CACHE_SECONDS. Deleting a tenant drops its
 * settings and revokes its issued keys; its conversations stay until they expire.
 */
@Injectable()
export class TenantsService {
  constructor(
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
    @Inject(STORE) private readonly store: ConversationStore,
    @Inject(TENANTS) private readonly tenants: TenantDirectory,
    private readonly keys: ApiKeyService,
  ) {}

  /** @throws ApiError 403, 409 (multi-tenant mode off, or the tenant exists), 422. */
  async create(caller: Caller, body: CreateTenantDto): Promise<TenantView> {
    this.guard(caller);
    const now = new Date();
    const record: TenantRecord = {
      tenantId: body.tenant_id,
      name: body.name ?? body.tenant_id,
      maxUsers: null,
      maxSessionsPerUser: null,
      maxMcpServers: null,
      workspaceQuotaBytes: null,
      maxConcurrentRuns: null,
      requestsPerMinute: null,
      features: {},
      ...toUpdate(body),
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.store.tenants.create(record);
    } catch (err) {
      if (err instanceof TenantExistsError) throw new ApiError(409, 'tenant_exists', `A tenant "${body.tenant_id}" exists already; PUT changes it`, { tenant_id: body.tenant_id });
      throw err;
    }
    this.tenants.forget(record.tenantId);
    return tenantView(record);
  }

  /** @throws ApiError 403, 409 (multi-tenant mode off). */
  async list(caller: Caller, query: TenantQueryDto): Promise<TenantList> {
    this.guard(caller);
    const rows = await this.store.tenants.list({ limit: query.limit, offset: query.offset });
    return { tenants: rows.map(tenantView), limit: query.limit, offset: query.offset };
  }

  /** @throws ApiError 403, 404, 409 (multi-tenant mode off). */
  async get(caller: Caller, tenantId: string): Promise<TenantView> {
    this.guard(caller);
    const row = await this.store.tenants.get(tenantId);
    if (!row) throw ApiError.notFound('tenant', tenantId);
    return tenantView(row);
  }

  /** Changes the fields the body names; null puts a limit back to the deployment's default. @throws ApiError 403, 404, 409, 422. */
  async update(caller: Caller, tenantId: string, body: TenantSettingsDto): Promise<TenantView> {
    this.guard(caller);
    const updated = await this.store.tenants.update(tenantId, toUpdate(body), new Date());
    if (!updated) throw ApiError.notFound('tenant', tenantId);
    this.tenants.forget(tenantId);
    return tenantView(updated);
  }

  /** @throws ApiError 403, 404, 409 (multi-tenant mode off). */
  async remove(caller: Caller, tenantId: string): Promise<TenantDeleted> {
    this.guard(caller);
    if (!(await this.store.tenants.delete(tenantId))) throw ApiError.notFound('tenant', tenantId);
    const revoked = await this.store.apiKeys.revokeTenant(tenantId, new Date());
    for (const hash of revoked) this.keys.forget(hash);
    this.tenants.forget(tenantId);
    return { tenant_id: tenantId, deleted: true, revoked_keys: revoked.length };
  }

  private guard(caller: Caller): void {
    if (caller.role !== 'operator') throw new ApiError(403, 'operator_required', 'Only an operator manages tenants');
    if (!this.settings.tenancy.multiTenant) {
      throw new ApiError(409, 'multi_tenant_off', 'Tenants have their own settings only in multi-tenant mode: set DATAAGENT_MULTI_TENANT=true on gateways and workers');
    }
  }
}

/** The fields a body names, as stored. @throws ApiError 422 for a workspace_quota that is not a size. */
function toUpdate(body: TenantSettingsDto): TenantUpdate {
  const update: TenantUpdate = {};
  if (body.name !== undefined) update.name = body.name;
  if (body.max_users !== undefined) update.maxUsers = body.max_users;
  if (body.max_sessions_per_user !== undefined) update.maxSessionsPerUser = body.max_sessions_per_user;
  if (body.max_mcp_servers !== undefined) update.maxMcpServers = body.max_mcp_servers;
  if (body.max_concurrent_runs !== undefined) update.maxConcurrentRuns = body.max_concurrent_runs;
  if (body.requests_per_minute !== undefined) update.requestsPerMinute = body.requests_per_minute;
  if (body.workspace_quota !== undefined) update.workspaceQuotaBytes = workspaceQuota(body.workspace_quota);
  if (body.features_enabled !== undefined) update.features = features(body.features_enabled);
  if (body.timezone !== undefined) {
    if (!isTimeZone(body.timezone)) throw invalidFields({ timezone: [`"${body.timezone}" is not a time zone; give an IANA name such as UTC or Europe/Paris`] });
    update.timeZone = body.timezone;
  }
  return update;
}

function workspaceQuota(value: number | string | null): number | null {
  if (value === null) return null;
  const bytes = typeof value === 'number' ? (Number.isSafeInteger(value) && value > 0 ? value : null) : parseByteSize(value);
  if (bytes === null || bytes <= 0) throw invalidFields({ workspace_quota: ['must be a positive number of bytes, or a size such as "500MB" or "2GB"'] });
  return bytes;
}

/** Only the switches given: a list left out allows all of its kind. */
function features(value: TenantSettingsDto['features_enabled']): TenantFeatures {
  const out: TenantFeatures = {};
  if (!value) return out;
  if (value.tools) out.tools = [...new Set(value.tools)];
  if (value.skills) out.skills = [...new Set(value.skills)];
  if (value.mcp_servers) out.mcp_servers = [...new Set(value.mcp_servers)];
  if (value.shell !== undefined) out.shell = value.shell;
  return out;
}

function tenantView(r: TenantRecord): TenantView {
  return {
    tenant_id: r.tenantId,
    name: r.name,
    max_users: r.maxUsers,
    max_sessions_per_user: r.maxSessionsPerUser,
    max_mcp_servers: r.maxMcpServers,
    workspace_quota: r.workspaceQuotaBytes,
    max_concurrent_runs: r.maxConcurrentRuns,
    requests_per_minute: r.requestsPerMinute,
    features_enabled: r.features,
    timezone: r.timeZone ?? 'UTC',
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}
