/**
 * What has to be stopped at the end of a run, in reverse order of starting. Every step runs
 * even when an earlier one fails, so an error half-way through still leaves no process behind.
 */
export class Teardown {
  private readonly steps: Array<{ name: string; run: () => Promise<unknown> }> = [];
  private running?: Promise<void>;

  /** Registers a stop action; the last registered runs first. */
  add(name: string, run: () => Promise<unknown>): void {
    this.steps.push({ name, run });
  }

  /**
   * Runs every registered step once (later calls wait for the first).
   *
   * @param log Where failed steps are reported.
   */
  runAll(log: (line: string) => void): Promise<void> {
    this.running ??= (async () => {
      while (this.steps.length > 0) {
        const step = this.steps.pop()!;
        try {
          await step.run();
        } catch (err) {
          log(`stopping ${step.name} failed: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    })();
    return this.running;
  }
}
