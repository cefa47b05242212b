/** One remembered note. */
export interface MemoryNote {
  /** Unique within its store. */
  id: string;
  text: string;
  /** ISO 8601. */
  createdAt: string;
}

/** Whose notes: one user of one tenant (the same user id in two tenants is two people). */
export interface MemoryOwner {
  tenantId: string;
  userId: string;
}

export interface MemoryStoreOptions {
  /** Notes older than this are never recalled, and deleted (by a recall; the MySQL store at most every ten minutes per owner). Default 90. */
  retentionDays?: number;
  /** Longest note accepted, in characters. Default 2000. */
  maxNoteChars?: number;
}

export const DEFAULT_MEMORY_RETENTION_DAYS = 90;
const DAY_MS = 24 * 60 * 60 * 1000;

/** A note that is empty or too long. */
export class MemoryNoteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MemoryNoteError';
  }
}

/**
 * Long-term notes per tenant, user and assistant. Kept by the conversation
 * store (`ConversationStore.memories`), so a gateway clears exactly what every worker recalls.
 */
export interface MemoryStore {
  /**
   * Stores a note.
   * @param createdAt When it was written; default now (an import keeps a note's own time).
   * @returns the stored note.
   * @throws MemoryNoteError when the note is empty or longer than `maxNoteChars`.
   */
  add(owner: MemoryOwner, assistantId: string, note: string, createdAt?: Date): Promise<MemoryNote>;
  /**
   * The owner's newest `limit` notes for the assistant, newest first; notes of one millisecond
   * come in reverse order of adding. Notes past the retention period are deleted, not returned.
   */
  recall(owner: MemoryOwner, assistantId: string, limit: number): Promise<MemoryNote[]>;
  /** Deletes every note of the owner, for all assistants (a person asking to be forgotten). */
  clear(owner: MemoryOwner): Promise<void>;
}

/** The limits every MemoryStore applies: note length and retention. */
export class MemoryLimits {
  readonly maxNoteChars: number;
  private readonly retentionMs: number;

  /** @throws Error when `retentionDays` is not positive. */
  constructor(options: MemoryStoreOptions = {}) {
    const days = options.retentionDays ?? DEFAULT_MEMORY_RETENTION_DAYS;
    if (!(days > 0)) throw new Error(`retentionDays must be positive, got ${days}`);
    this.retentionMs = days * DAY_MS;
    this.maxNoteChars = options.maxNoteChars ?? 2000;
  }

  /**
   * The note as it is stored (trimmed).
   * @throws MemoryNoteError when it is empty or longer than `maxNoteChars`.
   */
  check(note: string): string {
    const text = note.trim();
    if (!text) throw new MemoryNoteError('The note is empty');
    if (text.length > this.maxNoteChars) throw new MemoryNoteError(`The note has ${text.length} characters; at most ${this.maxNoteChars} are kept. Shorten it.`);
    return text;
  }

  /** Notes created before this moment have expired. */
  cutoff(now: Date): Date {
    return new Date(now.getTime() - this.retentionMs);
  }
}
