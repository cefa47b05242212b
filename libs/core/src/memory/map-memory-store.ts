import { MemoryLimits, type MemoryNote, type MemoryOwner, type MemoryStore, type MemoryStoreOptions } from './memory-store.js';

interface Entry {
  note: MemoryNote;
  at: number;
  /** Adding order: breaks ties between notes of one millisecond. */
  seq: number;
}

/** Long-term notes in a map, for one process (DATAAGENT_SESSION_STORE=memory) and unit tests. */
export class MapMemoryStore implements MemoryStore {
  private readonly limits: MemoryLimits;
  /** owner key → assistant id → entries, oldest first. */
  private readonly owners = new Map<string, Map<string, Entry[]>>();
  private sequence = 0;

  /** @throws Error when `options.retentionDays` is not positive. */
  constructor(
    private readonly now: () => Date = () => new Date(),
    options: MemoryStoreOptions = {},
  ) {
    this.limits = new MemoryLimits(options);
  }

  async add(owner: MemoryOwner, assistantId: string, note: string, createdAt: Date = this.now()): Promise<MemoryNote> {
    const text = this.limits.check(note);
    const seq = ++this.sequence;
    const entry: Entry = { note: { id: String(seq), text, createdAt: createdAt.toISOString() }, at: createdAt.getTime(), seq };
    const assistants = this.owners.get(ownerKey(owner)) ?? new Map<string, Entry[]>();
    const entries = [...(assistants.get(assistantId) ?? []), entry].sort((a, b) => a.at - b.at || a.seq - b.seq);
    assistants.set(assistantId, entries);
    this.owners.set(ownerKey(owner), assistants);
    return { ...entry.note };
  }

  async recall(owner: MemoryOwner, assistantId: string, limit: number): Promise<MemoryNote[]> {
    const assistants = this.owners.get(ownerKey(owner));
    const cutoff = this.limits.cutoff(this.now()).getTime();
    const kept = (assistants?.get(assistantId) ?? []).filter((e) => e.at >= cutoff);
    if (kept.length > 0) assistants!.set(assistantId, kept);
    else assistants?.delete(assistantId);
    if (limit <= 0) return [];
    return kept
      .slice(-limit)
      .reverse()
      .map((e) => ({ ...e.note }));
  }

  async clear(owner: MemoryOwner): Promise<void> {
    this.owners.delete(ownerKey(owner));
  }
}

function ownerKey(owner: MemoryOwner): string {
  return JSON.stringify([owner.tenantId, owner.userId]);
}
