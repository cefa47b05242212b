import type { DataSource } from 'typeorm';
import { TenantExistsError, type TenantFeatures, type TenantRecord, type TenantStore, type TenantUpdate } from '#core/tenants/tenant.js';
import type { JsonObject } from './entities/column-types.js';
import { TenantEntity } from './entities/tenant.entity.js';

/** Tenants' settings in `tenants`. */
export class MysqlTenantStore implements TenantStore {
  constructor(private readonly dataSource: DataSource) {}

  private get repo() {
    return this.dataSource.getRepository(TenantEntity);
  }

  async create(record: TenantRecord): Promise<void> {
    try {
      await this.repo.insert({ ...record, features: record.features as JsonObject });
    } catch (err) {
      if ((err as { driverError?: { code?: string } }).driverError?.code === 'ER_DUP_ENTRY') throw new TenantExistsError(record.tenantId);
      throw err;
    }
  }

  async get(tenantId: string): Promise<TenantRecord | null> {
    const row = await this.repo.findOneBy({ tenantId });
    return row ? toRecord(row) : null;
  }

  async list(page: { limit: number; offset: number }): Promise<TenantRecord[]> {
    const rows = await this.repo.find({ order: { tenantId: 'ASC' }, take: page.limit, skip: page.offset });
    return rows.map(toRecord);
  }

  async update(tenantId: string, patch: TenantUpdate, at: Date): Promise<TenantRecord | null> {
    const { features, ...rest } = patch;
    const result = await this.repo.update({ tenantId }, { ...rest, ...(features ? { features: features as JsonObject } : {}), updatedAt: at });
    if (!result.affected) return null;
    return this.get(tenantId);
  }

  async delete(tenantId: string): Promise<boolean> {
    const result = await this.repo.delete({ tenantId });
    return (result.affected ?? 0) > 0;
  }
}

function toRecord(row: TenantEntity): TenantRecord {
  return {
    tenantId: row.tenantId,
    name: row.name,
    maxUsers: row.maxUsers,
    maxSessionsPerUser: row.maxSessionsPerUser,
    maxMcpServers: row.maxMcpServers,
    workspaceQuotaBytes: row.workspaceQuotaBytes,
    maxConcurrentRuns: row.maxConcurrentRuns,
    requestsPerMinute: row.requestsPerMinute,
    timeZone: row.timeZone,
    features: (typeof row.features === 'string' ? JSON.parse(row.features) : row.features) as TenantFeatures,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
