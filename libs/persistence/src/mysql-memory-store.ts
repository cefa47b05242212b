import { LessThan, MoreThanOrEqual, type DataSource, type Repository } from 'typeorm';
import { MemoryLimits, type MemoryNote, type MemoryOwner, type MemoryStore, type MemoryStoreOptions } from '#core/memory/memory-store.js';
import { MemoryNoteEntity } from './entities/memory-note.entity.js';

/** How often one owner's expired notes are deleted at most, per process: a recall needs no DELETE every run. */
const PURGE_EVERY_MS = 10 * 60_000;
/** Owners whose last purge is remembered; past that the record starts over (a few extra DELETEs). */
const MAX_PURGE_RECORDS = 10_000;

/**
 * Long-term notes in `memories`, read by (tenant, user, assistant, created_at) and the adding
 * order. A recall never returns a note past the retention; it deletes them too, at most every
 * ten minutes per owner and assistant, so the run path pays one SELECT, not a DELETE as well.
 */
export class MysqlMemoryStore implements MemoryStore {
  private readonly repo: Repository<MemoryNoteEntity>;
  private readonly limits: MemoryLimits;
  private readonly purgedAt = new Map<string, number>();

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
    const now = this.now();
    const cutoff = this.limits.cutoff(now);
    if (this.purgeDue(`${owner.tenantId}\n${owner.userId}\n${assistantId}`, now.getTime())) await this.repo.delete({ ...where, createdAt: LessThan(cutoff) });
    if (limit <= 0) return [];
    const rows = await this.repo.find({ where: { ...where, createdAt: MoreThanOrEqual(cutoff) }, order: { createdAt: 'DESC', id: 'DESC' }, take: limit });
    return rows.map((r) => ({ id: r.id, text: r.text, createdAt: r.createdAt.toISOString() }));
  }

  /** Whether the owner's expired notes are due for deleting (then the purge is recorded as done). */
  private purgeDue(key: string, now: number): boolean {
    const last = this.purgedAt.get(key);
    if (last !== undefined && now >= last && now - last < PURGE_EVERY_MS) return false;
    if (this.purgedAt.size >= MAX_PURGE_RECORDS) this.purgedAt.clear();
    this.purgedAt.set(key, now);
    return true;
  }

  async clear(owner: MemoryOwner): Promise<void> {
    await this.repo.delete({ tenantId: owner.tenantId, userId: owner.userId });
  }
}
