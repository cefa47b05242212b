/**
 * The questions asked so far, walked with up and down like a shell's history. What was being
 * typed before the walk started comes back when the walk goes past the newest entry.
 */
export class InputHistory {
  private readonly entries: string[] = [];
  /** Position in the walk: `entries.length` means "not walking". */
  private at = 0;
  private draft = '';

  /** Adds an asked question (not a repeat of the newest one) and ends any walk. */
  push(entry: string): void {
    if (entry.trim() && this.entries.at(-1) !== entry) this.entries.push(entry);
    this.at = this.entries.length;
    this.draft = '';
  }

  /** The entry before the one shown; `current` is kept as the draft when the walk starts. Undefined at the oldest. */
  older(current: string): string | undefined {
    if (this.at === 0) return undefined;
    if (this.at === this.entries.length) this.draft = current;
    return this.entries[--this.at];
  }

  /** The entry after the one shown, then the draft. Undefined when not walking. */
  newer(): string | undefined {
    if (this.at >= this.entries.length) return undefined;
    this.at++;
    return this.at === this.entries.length ? this.draft : this.entries[this.at];
  }
}
