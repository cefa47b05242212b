import type { CallUsage, RunUsage } from '../events/execution-event.js';
import { formatPico, parsePico } from '../usage/money.js';

/**
 * The tokens and cost of a run's model calls, summed over the run from each call's usage (the
 * provider's figures, or a tokenizer's estimate). The total says it is estimated when any
 * call's figures were; its cost is exact, and present once any call was priced.
 */
export class UsageTally {
  private input: number;
  private output: number;
  private cached: number;
  private estimated: boolean;
  private cost: bigint;
  private currency?: string;

  /** @param from what earlier attempts of the run counted (a continuation counts on). */
  constructor(from?: RunUsage) {
    this.input = from?.input_tokens ?? 0;
    this.output = from?.output_tokens ?? 0;
    this.cached = from?.cached_input_tokens ?? 0;
    this.estimated = from?.estimated === true;
    this.cost = from?.cost ? parsePico(from.cost) : 0n;
    this.currency = from?.currency;
  }

  add(call: CallUsage): void {
    this.input += call.inputTokens;
    this.output += call.outputTokens;
    this.cached += call.cachedInputTokens;
    if (call.estimated) this.estimated = true;
    if (call.priced) {
      this.cost += parsePico(call.cost);
      this.currency = call.currency;
    }
  }

  /** Input and output tokens so far. */
  get tokens(): number {
    return this.input + this.output;
  }

  total(): RunUsage {
    return {
      input_tokens: this.input,
      output_tokens: this.output,
      ...(this.cached > 0 ? { cached_input_tokens: this.cached } : {}),
      ...(this.estimated ? { estimated: true as const } : {}),
      ...(this.currency ? { cost: formatPico(this.cost), currency: this.currency } : {}),
    };
  }
}
