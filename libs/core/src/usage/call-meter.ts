import type { CallUsage } from '../events/execution-event.js';
import type { ChatMessage, ToolCallRequest, ToolSpec } from '../llm/chat-model.js';
import type { CallGrant, ModelCallBudget } from './call-budget.js';
import { formatPico } from './money.js';
import type { PriceTable } from './price-table.js';
import { estimateInputTokens, estimateOutputTokens } from './token-estimate.js';

/** What a provider reported for a call. */
export interface ReportedUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
}

export interface CallMeterOptions {
  /** The model's id (`openai:gpt-4o`): what prices it and picks the tokenizer for estimates. */
  model: string;
  prices: PriceTable;
  /** The budgets the run's calls draw on; absent, calls reserve nothing. */
  budget?: ModelCallBudget;
  /** Output tokens a call reserves (and is limited to) when the client set no max_tokens. */
  defaultMaxOutputTokens: number;
}

/** An estimate's margin when it is reserved: the tokenizer and the provider's framing differ a little. */
const RESERVE_MARGIN = 1.1;
const RESERVE_EXTRA = 16;

/**
 * Meters a run's model calls: before each, reserves its worst case from the run's budgets;
 * after it, records what it used (the provider's figures, or the model family's tokenizer
 * estimate, marked so), prices it exactly, and settles the reservation.
 */
export class CallMeter {
  private readonly estimates = new Map<number, number>();

  constructor(private readonly options: CallMeterOptions) {}

  /** Whether calls reserve from budgets (and so carry a max_tokens). */
  get budgeted(): boolean {
    return this.options.budget !== undefined;
  }

  /**
   * Before call number `call`: reserves its input and up to `requestedMaxTokens` (or the
   * default) of output. Granted, the call must ask for at most `maxOutputTokens`.
   */
  async claim(call: number, sent: { messages: ChatMessage[]; tools: ToolSpec[] }, requestedMaxTokens?: number): Promise<CallGrant> {
    const { budget, model, defaultMaxOutputTokens } = this.options;
    const maxOutputTokens = requestedMaxTokens ?? defaultMaxOutputTokens;
    if (!budget) return { granted: true, maxOutputTokens };
    const estimate = await estimateInputTokens(model, sent.messages, sent.tools);
    this.estimates.set(call, estimate);
    return budget.reserve({ call, model, inputTokens: Math.ceil(estimate * RESERVE_MARGIN) + RESERVE_EXTRA, maxOutputTokens });
  }

  /** After call number `call`: its usage as the run's log records it, priced; its reservation settled to it. */
  async record(call: number, reported: ReportedUsage | undefined, sent: { messages: ChatMessage[]; tools: ToolSpec[] }, received: { text: string; toolCalls: ToolCallRequest[] }): Promise<CallUsage> {
    const { model, prices, budget } = this.options;
    const estimate = this.estimates.get(call);
    this.estimates.delete(call);
    const tokens = reported
      ? { inputTokens: reported.inputTokens, outputTokens: reported.outputTokens, cachedInputTokens: Math.min(reported.cachedInputTokens ?? 0, reported.inputTokens) }
      : { inputTokens: estimate ?? (await estimateInputTokens(model, sent.messages, sent.tools)), outputTokens: await estimateOutputTokens(model, received.text, received.toolCalls), cachedInputTokens: 0 };
    const { cost, priced } = prices.cost(model, tokens);
    await budget?.settle(call, { inputTokens: tokens.inputTokens, outputTokens: tokens.outputTokens, cost });
    return { model, call, ...tokens, estimated: !reported, cost: formatPico(cost), currency: prices.currency, priced };
  }

  /** A call that failed before it answered: its reservation is given back whole. */
  async release(call: number): Promise<void> {
    this.estimates.delete(call);
    await this.options.budget?.settle(call, { inputTokens: 0, outputTokens: 0, cost: 0n });
  }
}
