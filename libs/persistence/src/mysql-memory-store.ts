import { LessThan, MoreThanOrEqual, type DataSource, type Repository } from 'typeorm';
import { MemoryLimits, type MemoryNote, type MemoryOwner, type MemoryStore, type MemoryStoreOptions } from '#core/memory/memory-store.js';
import { MemoryNoteEntity } from './entities/memory-note.entity.js';

/** Long-term notes in `memories`, read by (tenant, user, assistant, created_at) and the adding order. */
export class MysqlMemoryStore implements MemoryStore {
  private readonly repo: Repository<MemoryNoteEntity>;
  private readonly limits: MemoryLimits;

  /** @throws Error when `options.retentionDays` is not positive. */
  constructor(
    dataSource: DataSource,
    private readonly now: () => Date,
    options: MemoryStoreOptions = {},
  ) {
    this.repo = dataSource.getRepository(MemoryNoteEntity);
    this.limits = new MemoryLimits(options);
  }

  async add(owner: MemoryOwner, assistantId: string, note: string, createdAt: Date = this.now()): Promise<MemoryNote> {
    const text = this.limits.check(note);
    const inserted = await this.repo.insert({ tenantId: owner.tenantId, userId: owner.userId, assistantId, text, createdAt });
    return { id: String(inserted.identifiers[0]!.id), text, createdAt: createdAt.toISOString() };
  }

  async recall(owner: MemoryOwner, assistantId: string, limit: number): Promise<MemoryNote[]> {
    const where = { tenantId: owner.tenantId, userId: owner.userId, assistantId };
    const cutoff = this.limits.cutoff(this.now());
    await this.repo.delete({ ...where, createdAt: LessThan(cutoff) });
    if (limit <= 0) return [];
    const rows = await this.repo.find({ where: { ...where, createdAt: MoreThanOrEqual(cutoff) }, order: { createdAt: 'DESC', id: 'DESC' }, take: limit });
    return rows.map((r) => ({ id: r.id, text: r.text, createdAt: r.createdAt.toISOString() }));
  }

  async clear(owner: MemoryOwner): Promise<void> {
    await this.repo.delete({ tenantId: owner.tenantId, userId: owner.userId });
  }
}
