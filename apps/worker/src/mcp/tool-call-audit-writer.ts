import type { ToolCallAuditStore, ToolCallRecord } from '#core/mcp/tool-call-audit.js';

/** Records kept while the database cannot take them; past it the oldest are dropped (and logged). */
const MAX_PENDING = 10_000;

interface Logger {
  warn(obj: object, msg: string): void;
}

/**
 * Writes MCP call audit records in batches, off the runs' path: one multi-row insert every
 * `intervalMs`, or sooner when `batchSize` wait. A failed batch is kept and retried with the
 * next (the insert ignores records written already), up to a bound.
 */
export class ToolCallAuditWriter {
  private pending: ToolCallRecord[] = [];
  private flushing?: Promise<void>;
  private readonly timer: NodeJS.Timeout;
  private dropped = 0;

  constructor(
    private readonly store: ToolCallAuditStore,
    private readonly logger: Logger,
    private readonly options: { intervalMs: number; batchSize: number } = { intervalMs: 500, batchSize: 200 },
  ) {
    this.timer = setInterval(() => void this.flush(), options.intervalMs);
    this.timer.unref();
  }

  add(record: ToolCallRecord): void {
    this.pending.push(record);
    if (this.pending.length > MAX_PENDING) {
      this.dropped += this.pending.length - MAX_PENDING;
      this.pending.splice(0, this.pending.length - MAX_PENDING);
      this.logger.warn({ dropped: this.dropped }, 'MCP audit records dropped: the database has not taken them for too long');
    }
    if (this.pending.length >= this.options.batchSize) void this.flush();
  }

  /** Writes what is pending; batches take turns, so records land in the order they came. */
  async flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.pending.length === 0) return;
    const batch = this.pending.splice(0, this.options.batchSize * 5);
    this.flushing = this.store
      .append(batch)
      .catch((err: unknown) => {
        this.pending.unshift(...batch);
        this.logger.warn({ records: batch.length, err: err instanceof Error ? err.message : String(err) }, 'could not write MCP audit records; kept for the next flush');
      })
      .finally(() => {
        this.flushing = undefined;
      });
    return this.flushing;
  }

  /** Stops the timer and writes what is left (the worker is stopping). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    if (this.pending.length > 0) await this.flush();
  }
}
