import { BoundedLineReader } from './bounded-line-reader.js';

/** A reader with a `max`-byte cap that records what it reports. */
function reader(max: number) {
  const lines: string[] = [];
  const oversized: string[] = [];
  const r = new BoundedLineReader({ maxBytes: max, onLine: (l) => lines.push(l), onOversize: (head) => oversized.push(head) });
  return { r, lines, oversized, push: (text: string) => r.push(Buffer.from(text)) };
}

describe('BoundedLineReader', () => {
  it('splits lines across and within chunks, CRLF included, and skips empty ones', () => {
    const { lines, push } = reader(100);
    push('{"a":1}\n{"b"');
    push(':2}\r\n\n{"c":3');
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    push('}\n');
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('keeps a line of exactly the cap, and decodes UTF-8 split across chunks', () => {
    const { lines, oversized, r } = reader(4);
    const bytes = Buffer.from('é€\n'); // 2 + 3 bytes: over a cap of 4
    r.push(Buffer.from('abcd\n'));
    r.push(bytes.subarray(0, 1));
    expect(lines).toEqual(['abcd']);
    const small = reader(8);
    small.r.push(bytes.subarray(0, 3));
    small.r.push(bytes.subarray(3));
    expect(small.lines).toEqual(['é€']);
    expect(oversized).toEqual([]);
  });

  it('reports a line past the cap as soon as it passes it, with its first bytes, and drops it up to its newline', () => {
    const { lines, oversized, push } = reader(16);
    push('{"id":7,"result":');
    expect(oversized).toEqual(['{"id":7,"result":']);
    push('x'.repeat(1000));
    push('y'.repeat(1000));
    expect(oversized).toHaveLength(1);
    expect(lines).toEqual([]);
    push('"}\n{"id":8}\n');
    expect(lines).toEqual(['{"id":8}']);
    push(`${'z'.repeat(40)}\n`);
    expect(oversized).toHaveLength(2);
  });

  it('drops a 100 MiB line chunk by chunk with one report, and reads the line after it', () => {
    const { r, lines, oversized } = reader(4 * 1024 * 1024);
    for (let i = 0; i < 1600; i++) r.push(Buffer.alloc(64 * 1024, 0x78));
    r.push(Buffer.from('\n{"id":2,"result":{}}\n'));
    expect(oversized).toEqual(['x'.repeat(256)]);
    expect(lines).toEqual(['{"id":2,"result":{}}']);
  });

  it('clear() drops an unfinished line', () => {
    const { r, lines, push } = reader(100);
    push('{"half":');
    r.clear();
    push('{"whole":1}\n');
    expect(lines).toEqual(['{"whole":1}']);
  });
});
