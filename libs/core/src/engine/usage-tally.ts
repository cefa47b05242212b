import type { CallUsage, RunUsage } from '../events/execution-event.js';

/**
 * The tokens a run's model calls used, summed over the run from each call's usage (the
 * provider's figures, or a tokenizer's estimate). The total says it is estimated when any
 * call's figures were.
 */
export class UsageTally {
  private input: number;
  private output: number;
  private estimated: boolean;

  /** @param from what earlier attempts of the run counted (a continuation counts on). */
  constructor(from?: RunUsage) {
    this.input = from?.input_tokens ?? 0;
    this.output = from?.output_tokens ?? 0;
    this.estimated = from?.estimated === true;
  }

  add(call: CallUsage): void {
    this.input += call.inputTokens;
    this.output += call.outputTokens;
    if (call.estimated) this.estimated = true;
  }

  /** Input and output tokens so far. */
  get tokens(): number {
    return this.input + this.output;
  }

  total(): RunUsage {
    return { input_tokens: this.input, output_tokens: this.output, ...(this.estimated ? { estimated: true as const } : {}) };
  }
}
