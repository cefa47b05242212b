/**
 * Exact money. An amount is a bigint of pico-units (10^-12 of the currency unit): a price per
 * million tokens given to six decimals times a token count is exactly that many pico-units, so
 * costs are summed over months without a float ever rounding them.
 */
export type Pico = bigint;

export const PICO_DIGITS = 12;
const PICO_PER_UNIT = 10n ** BigInt(PICO_DIGITS);
/** Budgets are counted in Redis in micro-units (10^-6): exact in a Lua number up to 9 × 10^9 units. */
const PICO_PER_MICRO = 10n ** 6n;

/** Thrown for an amount that is not a plain non-negative decimal with at most `digits` decimals. */
export class BadAmountError extends Error {
  constructor(readonly text: string, why: string) {
    super(`"${text}" is not an amount: ${why}`);
    this.name = 'BadAmountError';
  }
}

/**
 * Reads a non-negative decimal ("2.5", "0.000150", "12") as an integer count of 10^-digits
 * units ("2.5" with 6 digits is 2_500_000n). More decimals than `digits`, a sign, an exponent
 * or anything else is refused rather than rounded.
 */
export function parseDecimal(text: string | number, digits: number): bigint {
  const source = typeof text === 'number' ? numberText(text) : text.trim();
  const match = /^(\d+)(?:\.(\d*))?$/.exec(source);
  if (!match) throw new BadAmountError(String(text), 'write it as a plain decimal such as 2.50');
  const [, whole, fraction = ''] = match;
  const significant = fraction.replace(/0+$/, '');
  if (significant.length > digits) throw new BadAmountError(String(text), `at most ${digits} decimals`);
  return BigInt(whole) * 10n ** BigInt(digits) + BigInt(significant.padEnd(digits, '0') || '0');
}

/** A JSON number as the decimal it was written as (12.5, not 1.25e1); exponents beyond that are refused. */
function numberText(value: number): string {
  if (!Number.isFinite(value) || value < 0) throw new BadAmountError(String(value), 'a finite amount of zero or more');
  const text = String(value);
  if (/e/i.test(text)) throw new BadAmountError(text, 'write it as a plain decimal, not with an exponent');
  return text;
}

/** An amount as a decimal string with `digits` decimals (formatPico(1_500_000n) is "0.000001500000"). */
export function formatPico(amount: Pico, digits = PICO_DIGITS): string {
  const negative = amount < 0n;
  const abs = negative ? -amount : amount;
  const scale = 10n ** BigInt(PICO_DIGITS - digits);
  // Rounded half up at the last digit shown.
  const scaled = digits === PICO_DIGITS ? abs : (abs + scale / 2n) / scale;
  const unit = 10n ** BigInt(digits);
  const whole = scaled / unit;
  const fraction = digits === 0 ? '' : `.${(scaled % unit).toString().padStart(digits, '0')}`;
  return `${negative ? '-' : ''}${whole}${fraction}`;
}

/** Reads an amount written by {@link formatPico} (or any decimal of at most 12 places) back. */
export function parsePico(text: string): Pico {
  const negative = text.startsWith('-');
  const amount = parseDecimal(negative ? text.slice(1) : text, PICO_DIGITS);
  return negative ? -amount : amount;
}

/** Whole currency units as pico-units. */
export function unitsToPico(units: bigint): Pico {
  return units * PICO_PER_UNIT;
}

/** Pico-units as micro-units, rounded up: what a budget counts, so a sum of calls never undercounts. */
export function picoToMicroCeil(amount: Pico): number {
  if (amount <= 0n) return 0;
  return Number((amount + PICO_PER_MICRO - 1n) / PICO_PER_MICRO);
}

/** Micro-units (a budget's count) as pico-units. */
export function microToPico(micros: number): Pico {
  return BigInt(Math.round(micros)) * PICO_PER_MICRO;
}
