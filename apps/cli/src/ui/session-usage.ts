import type { EventDict } from '#core/events/execution-event.js';
import { formatPico, parsePico } from '#core/usage/money.js';

/** What the model calls of this CLI session used, summed from their `usage` events (exact cost). */
export class SessionUsage {
  private calls = 0;
  private input = 0;
  private output = 0;
  private estimated = 0;
  private cost = 0n;
  private currency?: string;

  add(event: EventDict): void {
    if (event.event_type !== 'usage') return;
    this.calls++;
    this.input += event.input_tokens;
    this.output += event.output_tokens;
    if (event.estimated) this.estimated++;
    if (event.priced !== false) {
      this.cost += parsePico(event.cost);
      this.currency = event.currency;
    }
  }

  reset(): void {
    Object.assign(this, new SessionUsage());
  }

  /** "this session: 3 model calls, 1,234 tokens (1,200 in, 34 out), 0.0031 USD". */
  describe(): string {
    if (this.calls === 0) return 'this session: no model calls yet';
    const n = (x: number) => x.toLocaleString('en-US');
    const estimated = this.estimated > 0 ? `; ${this.estimated} estimated (the provider reported nothing)` : '';
    const cost = this.currency ? `, ${formatPico(this.cost, 4)} ${this.currency}` : '';
    return `this session: ${n(this.calls)} model call${this.calls === 1 ? '' : 's'}, ${n(this.input + this.output)} tokens (${n(this.input)} in, ${n(this.output)} out)${cost}${estimated}`;
  }
}
