/**
 * Writes items in batches: the items added while a batch is being written go together in the
 * next one (group commit), so a burst of N writers costs a few round trips instead of N, and a
 * lone item is written at once. Each add resolves once its item is written. When a batch fails,
 * its items are written one by one, so an item that cannot be written fails alone.
 */
export class GroupCommit<T> {
  private queue: Array<{ item: T; resolve: () => void; reject: (err: unknown) => void }> = [];
  private writing = false;

  /**
   * @param write Writes a batch, all or nothing.
   * @param maxBatch Items per batch at most.
   */
  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly maxBatch = 500,
  ) {}

  /** Resolves once `item` is written; rejects with the error of writing it alone. */
  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  /** Items waiting for a batch (not counting the one being written). */
  get waiting(): number {
    return this.queue.length;
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          await this.write(batch.map((entry) => entry.item));
          for (const entry of batch) entry.resolve();
        } catch (err) {
          if (batch.length === 1) batch[0]!.reject(err);
          else await Promise.all(batch.map((entry) => this.write([entry.item]).then(entry.resolve, entry.reject)));
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
