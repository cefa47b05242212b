/**
 * How long a cluster primary waits before it starts a gateway process again: `initialMs` after a
 * process that ran a while, doubling while replacements keep dying young, at most `maxMs`. A
 * process that ran for `stableMs` or more starts the count afresh.
 */
export class RestartBackoff {
  private failures = 0;

  constructor(
    readonly initialMs = 100,
    readonly maxMs = 10_000,
    readonly stableMs = 30_000,
  ) {}

  /**
   * @param uptimeMs How long the process that exited had run.
   * @returns The delay before its replacement starts.
   */
  next(uptimeMs: number): number {
    if (uptimeMs >= this.stableMs) this.failures = 0;
    const delay = Math.min(this.maxMs, this.initialMs * 2 ** this.failures);
    this.failures++;
    return delay;
  }
}
