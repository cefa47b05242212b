import { Inject, Injectable } from '@nestjs/common';
import { issueApiKey, type ApiKeyRecord } from '#core/auth/managed-api-keys.js';
import type { Caller } from '#core/auth/caller.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { ApiKeyService } from '../auth/api-key.service.js';
import { ApiError } from '../common/api-error.js';
import { invalidFields } from '../common/validation.js';
import { STORE } from '../infra/tokens.js';
import { Quotas } from '../quotas/quotas.service.js';
import { requireAdmin } from './require-admin.js';
import type { ApiKeyQueryDto, CreateApiKeyDto } from './api-keys.dto.js';
import type { ApiKeyList, ApiKeyRevoked, ApiKeyView, IssuedApiKey } from './api-key-view.dto.js';

/**
 * API keys issued through the API: a tenant's admins issue, list and revoke their tenant's keys
 * (user or admin); operators those of every tenant, operators' included. The key is shown once,
 * when it is created; only its hash is stored.
 */
@Injectable()
export class ApiKeysService {
  constructor(
    @Inject(STORE) private readonly store: ConversationStore,
    private readonly keys: ApiKeyService,
    private readonly quotas: Quotas,
  ) {}

  /** @throws ApiError 403 (not an admin, or an admin asking for another tenant or an operator key), 422 (an expiry not in the future), 429 `user_limit` (a new user past the tenant's max_users). */
  async create(caller: Caller, body: CreateApiKeyDto): Promise<IssuedApiKey> {
    requireAdmin(caller);
    const operator = caller.role === 'operator';
    if (!operator && body.tenant_id !== undefined && body.tenant_id !== caller.tenantId) throw forbidden('Only an operator issues keys for another tenant');
    if (!operator && body.role === 'operator') throw forbidden('Only an operator issues operator keys');
    const expiresAt = body.expires_at === undefined ? undefined : new Date(body.expires_at);
    if (expiresAt && expiresAt.getTime() <= Date.now()) throw invalidFields({ expires_at: ['must be in the future'] });
    const tenantId = body.tenant_id ?? caller.tenantId;
    await this.quotas.admitUser(tenantId, body.user_id);
    const issued = issueApiKey();
    const record: ApiKeyRecord = {
      keyId: issued.keyId,
      tenantId,
      userId: body.user_id,
      role: body.role,
      prefix: issued.prefix,
      keyHash: issued.keyHash,
      createdBy: `${caller.tenantId}/${caller.userId}`,
      createdAt: new Date(),
      ...(expiresAt ? { expiresAt } : {}),
    };
    await this.store.apiKeys.create(record);
    return { ...keyView(record), key: issued.key };
  }

  /** @throws ApiError 403 for a non-admin, or an admin asking for another tenant. */
  async list(caller: Caller, query: ApiKeyQueryDto): Promise<ApiKeyList> {
    requireAdmin(caller);
    const operator = caller.role === 'operator';
    if (!operator && query.tenant_id !== undefined && query.tenant_id !== caller.tenantId) throw forbidden("Only an operator lists another tenant's keys");
    const tenant = operator ? query.tenant_id : caller.tenantId;
    const keys = await this.store.apiKeys.list(tenant, { limit: query.limit, offset: query.offset });
    return { api_keys: keys.map(keyView), limit: query.limit, offset: query.offset };
  }

  /** Revokes the key on every gateway within DATAAGENT_API_KEY_CACHE_SECONDS. @throws ApiError 403, 404 (no such key in the caller's reach). */
  async revoke(caller: Caller, keyId: string): Promise<ApiKeyRevoked> {
    requireAdmin(caller);
    const record = await this.store.apiKeys.get(keyId);
    const reachable = record && (caller.role === 'operator' || (record.tenantId === caller.tenantId && record.role !== 'operator'));
    if (!reachable) throw ApiError.notFound('api_key', keyId);
    await this.store.apiKeys.revoke(keyId, new Date());
    this.keys.forget(record.keyHash);
    return { key_id: keyId, revoked: true };
  }
}


function forbidden(message: string): ApiError {
  return new ApiError(403, 'operator_required', message);
}

/** A key as the API shows it: never the key or its hash. */
function keyView(r: ApiKeyRecord): ApiKeyView {
  return {
    key_id: r.keyId,
    prefix: r.prefix,
    tenant_id: r.tenantId,
    user_id: r.userId,
    role: r.role,
    created_by: r.createdBy,
    created_at: r.createdAt.toISOString(),
    last_used_at: r.lastUsedAt?.toISOString() ?? null,
    expires_at: r.expiresAt?.toISOString() ?? null,
    revoked_at: r.revokedAt?.toISOString() ?? null,
  };
}
