import { BadAmountError, parseDecimal, type Pico } from './money.js';

/** What one model's tokens cost, per million, in micro-units of the currency (exact: "2.50" is 2_500_000n). */
export interface ModelPrice {
  input: bigint;
  output: bigint;
  /** Input tokens read from the provider's prompt cache; the input price where none is given. */
  cachedInput: bigint;
}

/** A model call's tokens. `inputTokens` counts the cached ones too, as OpenAI and Anthropic report them. */
export interface CallTokens {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
}

/** One model's price as written in configuration and the admin API: decimals per million tokens. */
export interface PriceText {
  input: string;
  output: string;
  cached_input?: string;
}

/** Thrown for a price table that cannot be read; the message names the model and the field. */
export class BadPriceTableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BadPriceTableError';
  }
}

/** Six decimals of a unit per million tokens: a millionth of a micro-unit per token, so the cost is exact in pico-units. */
const PRICE_DIGITS = 6;

/**
 * Prices per model, matched by the model's id (`openai:gpt-4o`) or its name without the
 * provider (`gpt-4o`). A pattern ending in `*` matches every id it starts; the longest match
 * wins, `*` alone matches every model. A model that matches nothing costs nothing, and says so.
 */
export class PriceTable {
  static readonly EMPTY = new PriceTable('USD', new Map());

  private constructor(
    readonly currency: string,
    private readonly prices: ReadonlyMap<string, ModelPrice>,
  ) {}

  /**
   * Reads `{"gpt-4o": {"input": "2.50", "output": "10.00", "cached_input": "1.25"}, "claude-*": ...}`:
   * prices per million tokens, as decimal strings or plain numbers, at most 6 decimals.
   * @throws BadPriceTableError naming what is wrong.
   */
  static parse(source: unknown, currency = 'USD'): PriceTable {
    const json = typeof source === 'string' ? parseJson(source) : source;
    if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new BadPriceTableError('the price table must be a JSON object of model → {input, output, cached_input}');
    if (!/^[A-Z][A-Z0-9_]{1,9}$/.test(currency)) throw new BadPriceTableError(`currency "${currency}" must be a code such as USD or CREDITS`);
    const prices = new Map<string, ModelPrice>();
    for (const [model, entry] of Object.entries(json as Record<string, unknown>)) {
      if (model.length === 0 || model.length > 200 || model.slice(0, -1).includes('*')) throw new BadPriceTableError(`model "${model}": a name, or a name ending in * (1 to 200 characters)`);
      prices.set(model, readPrice(model, entry));
    }
    return new PriceTable(currency, prices);
  }

  /** The table as written ({@link parse} reads it back to an equal table). */
  toJSON(): Record<string, PriceText> {
    return Object.fromEntries([...this.prices].map(([model, price]) => [model, priceText(price)]));
  }

  get size(): number {
    return this.prices.size;
  }

  /** The pattern that prices this model, and its price; undefined when none does. */
  match(modelId: string): { pattern: string; price: ModelPrice } | undefined {
    const names = [modelId, modelId.includes(':') ? modelId.slice(modelId.indexOf(':') + 1) : undefined].filter((n): n is string => n !== undefined);
    const exact = names.find((name) => this.prices.has(name));
    if (exact) return { pattern: exact, price: this.prices.get(exact)! };
    let best: string | undefined;
    for (const pattern of this.prices.keys()) {
      if (!pattern.endsWith('*')) continue;
      const prefix = pattern.slice(0, -1);
      if (names.some((name) => name.startsWith(prefix)) && (best === undefined || pattern.length > best.length)) best = pattern;
    }
    return best === undefined ? undefined : { pattern: best, price: this.prices.get(best)! };
  }

  /** What a call cost, exactly, in pico-units; `priced` false (and 0) for a model the table does not price. */
  cost(modelId: string, tokens: CallTokens): { cost: Pico; priced: boolean } {
    const found = this.match(modelId);
    if (!found) return { cost: 0n, priced: false };
    return { cost: costOf(found.price, tokens), priced: true };
  }

  /** The most a call can cost given its input and at most `outputTokens` of answer (a reservation's worst case). */
  worstCase(modelId: string, inputTokens: number, outputTokens: number): Pico {
    const found = this.match(modelId);
    return found ? costOf(found.price, { inputTokens, outputTokens, cachedInputTokens: 0 }) : 0n;
  }
}

function costOf(price: ModelPrice, tokens: CallTokens): Pico {
  const cached = Math.min(tokens.cachedInputTokens, tokens.inputTokens);
  return BigInt(tokens.inputTokens - cached) * price.input + BigInt(cached) * price.cachedInput + BigInt(tokens.outputTokens) * price.output;
}

function readPrice(model: string, entry: unknown): ModelPrice {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new BadPriceTableError(`model "${model}": give {"input": "2.50", "output": "10.00"} per million tokens`);
  const fields = entry as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((k) => !['input', 'output', 'cached_input'].includes(k));
  if (unknown.length > 0) throw new BadPriceTableError(`model "${model}": unknown field ${unknown.map((k) => `"${k}"`).join(', ')} (input, output, cached_input)`);
  const read = (field: string): bigint => {
    const value = fields[field];
    if (typeof value !== 'string' && typeof value !== 'number') throw new BadPriceTableError(`model "${model}": "${field}" must be a price per million tokens, such as "2.50"`);
    try {
      return parseDecimal(value, PRICE_DIGITS);
    } catch (err) {
      if (err instanceof BadAmountError) throw new BadPriceTableError(`model "${model}", "${field}": ${err.message}`);
      throw err;
    }
  };
  const input = read('input');
  return { input, output: read('output'), cachedInput: fields.cached_input === undefined ? input : read('cached_input') };
}

function priceText(price: ModelPrice): PriceText {
  const text = (micros: bigint) => {
    const whole = micros / 1_000_000n;
    const fraction = (micros % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
    return fraction ? `${whole}.${fraction}` : String(whole);
  };
  return { input: text(price.input), output: text(price.output), ...(price.cachedInput !== price.input ? { cached_input: text(price.cachedInput) } : {}) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new BadPriceTableError(`the price table is not JSON: ${(err as Error).message}`);
  }
}
