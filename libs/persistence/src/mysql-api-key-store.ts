import { IsNull, type DataSource } from 'typeorm';
import type { ApiKeyRecord, ApiKeyStore } from '#core/auth/managed-api-keys.js';
import type { Role } from '#core/auth/caller.js';
import { ApiKeyEntity } from './entities/api-key.entity.js';

/** Issued API keys in `api_keys`, looked up by the hash's unique index. */
export class MysqlApiKeyStore implements ApiKeyStore {
  constructor(private readonly dataSource: DataSource) {}

  private get repo() {
    return this.dataSource.getRepository(ApiKeyEntity);
  }

  async create(record: ApiKeyRecord): Promise<void> {
    await this.repo.insert({ ...record, lastUsedAt: record.lastUsedAt ?? null, expiresAt: record.expiresAt ?? null, revokedAt: record.revokedAt ?? null });
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const row = await this.repo.findOneBy({ keyHash });
    return row ? toRecord(row) : null;
  }

  async list(tenantId: string | undefined, page: { limit: number; offset: number }): Promise<ApiKeyRecord[]> {
    const rows = await this.repo.find({ where: tenantId === undefined ? {} : { tenantId }, order: { createdAt: 'DESC', keyId: 'ASC' }, take: page.limit, skip: page.offset });
    return rows.map(toRecord);
  }

  async get(keyId: string): Promise<ApiKeyRecord | null> {
    const row = await this.repo.findOneBy({ keyId });
    return row ? toRecord(row) : null;
  }

  async revoke(keyId: string, at: Date): Promise<boolean> {
    await this.repo.update({ keyId, revokedAt: IsNull() }, { revokedAt: at });
    return this.repo.existsBy({ keyId });
  }

  async touch(keyId: string, at: Date): Promise<void> {
    await this.repo.update({ keyId }, { lastUsedAt: at });
  }

  async liveUsers(tenantId: string, at: Date): Promise<string[]> {
    const rows: Array<{ user_id: string }> = await this.repo
      .createQueryBuilder('k')
      .select('DISTINCT k.user_id', 'user_id')
      .where('k.tenant_id = :tenantId AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > :at)', { tenantId, at })
      .getRawMany();
    return rows.map((r) => r.user_id);
  }

  async revokeTenant(tenantId: string, at: Date): Promise<string[]> {
    const live = await this.repo.find({ select: { keyId: true, keyHash: true }, where: { tenantId, revokedAt: IsNull() } });
    if (live.length > 0) await this.repo.update({ tenantId, revokedAt: IsNull() }, { revokedAt: at });
    return live.map((r) => r.keyHash);
  }
}

function toRecord(row: ApiKeyEntity): ApiKeyRecord {
  return {
    keyId: row.keyId,
    tenantId: row.tenantId,
    userId: row.userId,
    role: row.role as Role,
    prefix: row.prefix,
    keyHash: row.keyHash,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    ...(row.lastUsedAt ? { lastUsedAt: row.lastUsedAt } : {}),
    ...(row.expiresAt ? { expiresAt: row.expiresAt } : {}),
    ...(row.revokedAt ? { revokedAt: row.revokedAt } : {}),
  };
}
