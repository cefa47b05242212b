import fc from 'fast-check';
import { BadAmountError, formatPico, parseDecimal, parsePico, picoToMicroCeil } from './money.js';
import { PriceTable } from './price-table.js';

describe('exact money', () => {
  it('reads decimals exactly, and refuses what it would have to round', () => {
    expect(parseDecimal('2.50', 6)).toBe(2_500_000n);
    expect(parseDecimal('0.000001', 6)).toBe(1n);
    expect(parseDecimal('12', 6)).toBe(12_000_000n);
    expect(parseDecimal(0.15, 6)).toBe(150_000n);
    expect(parseDecimal('1.2300000', 6)).toBe(1_230_000n);
    for (const bad of ['0.0000001', '-1', '1e3', '', '.5', '1,5', 'NaN', ' ']) expect(() => parseDecimal(bad, 6)).toThrow(BadAmountError);
    expect(() => parseDecimal(1e-7, 6)).toThrow(BadAmountError);
    expect(() => parseDecimal(-2, 6)).toThrow(BadAmountError);
  });

  it('formats pico-units and reads them back', () => {
    expect(formatPico(2_500_000n)).toBe('0.000002500000');
    expect(formatPico(1_234_567_890_123_456n)).toBe('1234.567890123456');
    expect(formatPico(1_500_000n, 6)).toBe('0.000002');
    expect(formatPico(-5n)).toBe('-0.000000000005');
    fc.assert(fc.property(fc.bigInt({ min: -(10n ** 24n), max: 10n ** 24n }), (amount) => parsePico(formatPico(amount)) === amount));
  });

  it('rounds budgets up to micro-units, never down', () => {
    expect(picoToMicroCeil(0n)).toBe(0);
    expect(picoToMicroCeil(1n)).toBe(1);
    expect(picoToMicroCeil(1_000_000n)).toBe(1);
    expect(picoToMicroCeil(1_000_001n)).toBe(2);
  });

  it('sums a million small calls to the cent a float would lose', () => {
    // 1,000,000 calls of 37 input and 3 output tokens at 0.15 / 0.60 per million tokens.
    const table = PriceTable.parse({ 'gpt-4o-mini': { input: '0.15', output: '0.60' } });
    let exact = 0n;
    let float = 0;
    for (let i = 0; i < 1_000_000; i++) {
      exact += table.cost('openai:gpt-4o-mini', { inputTokens: 37, outputTokens: 3, cachedInputTokens: 0 }).cost;
      float += (37 * 0.15 + 3 * 0.6) / 1e6;
    }
    expect(formatPico(exact)).toBe('7.350000000000');
    expect(float).not.toBe(7.35);
  });

  it('the sum of the calls is the cost of the sum, for any calls (exactness, not rounding luck)', () => {
    const table = PriceTable.parse({ '*': { input: '3.123457', output: '15.000001', cached_input: '0.3' } });
    const call = fc.record({ inputTokens: fc.nat(200_000), outputTokens: fc.nat(20_000), cachedInputTokens: fc.nat(200_000) });
    fc.assert(
      fc.property(fc.array(call, { maxLength: 200 }), (calls) => {
        const each = calls.reduce((sum, c) => sum + table.cost('m', c).cost, 0n);
        const capped = calls.map((c) => ({ ...c, cachedInputTokens: Math.min(c.cachedInputTokens, c.inputTokens) }));
        const total = {
          inputTokens: capped.reduce((n, c) => n + c.inputTokens - c.cachedInputTokens, 0),
          outputTokens: capped.reduce((n, c) => n + c.outputTokens, 0),
          cachedInputTokens: 0,
        };
        const cached = capped.reduce((n, c) => n + c.cachedInputTokens, 0);
        return each === table.cost('m', total).cost + BigInt(cached) * 300_000n;
      }),
    );
  });
});

describe('price table', () => {
  const table = PriceTable.parse({
    'gpt-4o': { input: '2.50', output: '10.00', cached_input: '1.25' },
    'gpt-4o-mini*': { input: 0.15, output: 0.6 },
    'claude-*': { input: '3', output: '15' },
    '*': { input: '1', output: '2' },
  });

  it('matches by id or by name, exact before the longest pattern', () => {
    expect(table.match('openai:gpt-4o')?.pattern).toBe('gpt-4o');
    expect(table.match('gpt-4o-mini-2024-07-18')?.pattern).toBe('gpt-4o-mini*');
    expect(table.match('anthropic:claude-sonnet-4')?.pattern).toBe('claude-*');
    expect(table.match('offline')?.pattern).toBe('*');
    expect(PriceTable.parse({ 'gpt-4o': { input: 1, output: 1 } }).match('offline')).toBeUndefined();
  });

  it('prices cached input at its own rate, within the input count', () => {
    // 1,000 input of which 400 cached, 100 output: 600 × 2.5 + 400 × 1.25 + 100 × 10 micro-units per million.
    expect(table.cost('openai:gpt-4o', { inputTokens: 1000, outputTokens: 100, cachedInputTokens: 400 })).toEqual({ cost: 3_000_000_000n, priced: true });
    expect(formatPico(3_000_000_000n)).toBe('0.003000000000');
    expect(PriceTable.EMPTY.cost('x', { inputTokens: 5, outputTokens: 5, cachedInputTokens: 0 })).toEqual({ cost: 0n, priced: false });
  });

  it('writes itself back as it was read', () => {
    expect(PriceTable.parse(table.toJSON()).toJSON()).toEqual(table.toJSON());
    expect(table.toJSON()['gpt-4o-mini*']).toEqual({ input: '0.15', output: '0.6' });
  });

  it('names what is wrong with a bad table', () => {
    expect(() => PriceTable.parse('{')).toThrow(/not JSON/);
    expect(() => PriceTable.parse([])).toThrow(/JSON object/);
    expect(() => PriceTable.parse({ m: { input: '1' } })).toThrow(/model "m": "output"/);
    expect(() => PriceTable.parse({ m: { input: '1', output: '-2' } })).toThrow(/model "m", "output"/);
    expect(() => PriceTable.parse({ m: { input: '1', output: '2', cache: '1' } })).toThrow(/unknown field "cache"/);
    expect(() => PriceTable.parse({ 'a*b': { input: '1', output: '2' } })).toThrow(/ending in \*/);
    expect(() => PriceTable.parse({}, 'dollars')).toThrow(/currency/);
  });
});
