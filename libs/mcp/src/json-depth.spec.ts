import { exceedsJsonDepth } from './json-depth.js';

/** `{"a":{"a":…0…}}` nested `levels` deep, parsed (JSON.parse does not recurse; building it by hand would). */
const nested = (levels: number, open = '{"a":', close = '}') => JSON.parse(`${open.repeat(levels)}0${close.repeat(levels)}`) as unknown;

describe('exceedsJsonDepth', () => {
  it('counts objects and arrays as levels, scalars as none', () => {
    expect(exceedsJsonDepth('text', 0)).toBe(false);
    expect(exceedsJsonDepth(null, 0)).toBe(false);
    expect(exceedsJsonDepth({}, 0)).toBe(true);
    expect(exceedsJsonDepth({}, 1)).toBe(false);
    expect(exceedsJsonDepth([[1], { a: [2] }], 3)).toBe(false);
    expect(exceedsJsonDepth([[1], { a: [[2]] }], 3)).toBe(true);
  });

  it('finds the one deep path among many shallow ones', () => {
    const wide = { rows: Array.from({ length: 1000 }, (_, i) => ({ i })), deep: nested(10) };
    expect(exceedsJsonDepth(wide, 11)).toBe(false);
    expect(exceedsJsonDepth(wide, 10)).toBe(true);
  });

  it('checks JSON nested 100,000 deep without overflowing the stack, which JSON.stringify cannot', () => {
    const deep = nested(100_000, '[', ']');
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(exceedsJsonDepth(deep, 100)).toBe(true);
    expect(exceedsJsonDepth(nested(100), 100)).toBe(false);
    expect(exceedsJsonDepth(nested(101), 100)).toBe(true);
  });
});
