import { type DetectorOutput, StreamingToolActionDetector, splitToolActions } from './streaming-tool-action-detector.js';

function sequentialIds(): () => string {
  let n = 0;
  return () => `ta_${++n}`;
}

function detector(options: ConstructorParameters<typeof StreamingToolActionDetector>[0] = {}) {
  return new StreamingToolActionDetector({ newId: sequentialIds(), ...options });
}

/** Feeds the chunks and returns every output, adjacent texts merged (chunking may split them). */
function feed(chunks: string[], options?: ConstructorParameters<typeof StreamingToolActionDetector>[0]): DetectorOutput[] {
  const d = detector(options);
  const out = [...chunks.flatMap((c) => d.push(c)), ...d.end()];
  return merge(out);
}

function merge(outputs: DetectorOutput[]): DetectorOutput[] {
  const merged: DetectorOutput[] = [];
  for (const o of outputs) {
    const last = merged[merged.length - 1];
    if (o.type === 'text' && last?.type === 'text') merged[merged.length - 1] = { type: 'text', text: last.text + o.text };
    else if (o.type === 'tool_call') {
      // The raw tag is checked once below; elsewhere only the parsed call matters.
      expect(o.raw.startsWith('<tool_action') && /(\/>|<\/tool_action>)$/.test(o.raw)).toBe(true);
      merged.push({ ...o, raw: '' });
    } else merged.push(o);
  }
  return merged;
}

const text = (t: string): DetectorOutput => ({ type: 'text', text: t });
const call = (id: string, name: string, args: Record<string, unknown>): DetectorOutput => ({
  type: 'tool_call',
  call: { id, name, arguments: args },
  raw: expect.any(String) as unknown as string,
});

describe('StreamingToolActionDetector', () => {
  it('handles a tag split over three chunks', () => {
    const d = detector();
    expect(d.push('思考: 我需要搜索...<tool_action name="')).toEqual([text('思考: 我需要搜索...')]);
    expect(d.push('vector-search"><query value="test"')).toEqual([]);
    expect(d.push('" /></tool_action>接下来...')).toEqual([call('ta_1', 'vector-search', { query: 'test' }), text('接下来...')]);
    expect(d.end()).toEqual([]);
  });

  it('handles the same example cut inside the attribute value', () => {
    const d = detector();
    expect(d.push('思考: 我需要搜索...<tool_action name="')).toEqual([text('思考: 我需要搜索...')]);
    expect(d.push('vector-search"><query value="te')).toEqual([]);
    expect(d.push('st" /></tool_action>接下来...')).toEqual([call('ta_1', 'vector-search', { query: 'test' }), text('接下来...')]);
  });

  it('parses a single call written with line breaks and indentation', () => {
    const reply = '<tool_action name="vector-search">\n  <query value="读取文件" />\n  <limit value="5" />\n</tool_action>';
    expect(feed([reply])).toEqual([call('ta_1', 'vector-search', { query: '读取文件', limit: '5' })]);
  });

  it('emits several calls in order, interleaved with the text between them', () => {
    const reply = 'A<tool_action name="one"><x value="1"/></tool_action>B<tool_action name="two"><y value="2"/></tool_action>C';
    expect(feed([reply])).toEqual([
      text('A'),
      call('ta_1', 'one', { x: '1' }),
      text('B'),
      call('ta_2', 'two', { y: '2' }),
      text('C'),
    ]);
  });

  it('gives the same result wherever a two-tag reply is cut into three chunks', () => {
    const reply =
      'Let me look: <tool_action name="search"><query value="a &lt; b &amp; &quot;c&quot;" /><limit value=\'5\'/></tool_action> then ' +
      '<tool_action name="read"><arg name="path" value="/tmp/x" /></tool_action> done';
    const expected = [
      text('Let me look: '),
      call('ta_1', 'search', { query: 'a < b & "c"', limit: '5' }),
      text(' then '),
      call('ta_2', 'read', { path: '/tmp/x' }),
      text(' done'),
    ];
    const want = JSON.stringify(expected.map((o) => (o.type === 'tool_call' ? { ...o, raw: '' } : o)));
    const wrong: string[] = [];
    for (let i = 0; i <= reply.length; i++) {
      for (let j = i; j <= reply.length; j++) {
        const got = JSON.stringify(feed([reply.slice(0, i), reply.slice(i, j), reply.slice(j)]));
        if (got !== want) wrong.push(`cut at ${i},${j}: ${got}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(feed(Array.from(reply))).toEqual(expected);
  });

  it.each([
    'a<b <tool_ac <tool_action name="x"> y <<tool_action name="t"><q>1 &lt; 2</q><arg name="r" value=\'3\'></arg></tool_action>z',
    '<tool_action name="a"><tool_action name="b"><q value="1"/></tool_action><tool_action name="c"><q value="x"" /></tool_action>',
    '<tool_action name="v"><q value="</tool_action> > <" /></tool_action><tool_action name="w"><q value="1" /></tool_action',
  ])('gives the same result for every single cut and for one character at a time: %s', (reply) => {
    const whole = JSON.stringify(feed([reply]));
    expect(whole).toContain('"tool_call"');
    const wrong: number[] = [];
    for (let i = 0; i <= reply.length; i++) if (JSON.stringify(feed([reply.slice(0, i), reply.slice(i)])) !== whole) wrong.push(i);
    expect(wrong).toEqual([]);
    expect(JSON.stringify(feed(Array.from(reply)))).toBe(whole);
  });

  it('emits text before a possible tag at once and holds only from the "<"', () => {
    const d = detector();
    expect(d.push('Hello <')).toEqual([text('Hello ')]);
    expect(d.push('tool_ac')).toEqual([]);
    expect(d.push('count is low')).toEqual([text('<tool_account is low')]);
  });

  it('releases a held "<" as soon as it cannot open a tag', () => {
    const d = detector();
    expect(d.push('x <')).toEqual([text('x ')]);
    expect(d.push('b> y')).toEqual([text('<b> y')]);
    expect(d.push('<tool_action name="t">')).toEqual([]);
    expect(d.push(' oops, prose')).toEqual([text('<tool_action name="t"> oops, prose')]);
  });

  it('passes "a < b" through as one text, since "<" there starts no tag', () => {
    const d = detector();
    const chunk = 'if a < b and c<d then';
    expect(d.push(chunk)).toEqual([text(chunk)]);
    expect(d.push('<<')).toEqual([text('<')]);
    expect(d.end()).toEqual([text('<')]);
  });

  it('returns a chunk without "<" unchanged, however large', () => {
    const d = detector();
    const big = 'plain prose without tags. '.repeat(200_000);
    const out = d.push(big);
    expect(out).toHaveLength(1);
    expect(out[0]!.type === 'text' && out[0]!.text).toBe(big);
  });

  it('never executes a tag left unclosed at the end: it comes out as text', () => {
    const d = detector();
    expect(d.push('Before <tool_action name="x"><q value="1" />')).toEqual([text('Before ')]);
    expect(d.push('\n')).toEqual([]);
    expect(d.end()).toEqual([text('<tool_action name="x"><q value="1" />\n')]);
    expect(d.end()).toEqual([]);
  });

  it('turns a complete but malformed tag into text without throwing', () => {
    const noName = '<tool_action><q value="1" /></tool_action>';
    const duplicate = '<tool_action name="x"><q value="1" /><q value="2" /></tool_action>';
    const noValue = '<tool_action name="x"><q /></tool_action>';
    for (const bad of [noName, duplicate, noValue]) {
      expect(feed(['a', bad, 'b'])).toEqual([text(`a${bad}b`)]);
      expect(feed(Array.from(`a${bad}b`))).toEqual([text(`a${bad}b`)]);
    }
  });

  it('restarts at a <tool_action opened inside an unfinished one', () => {
    const reply = '<tool_action name="a"><tool_action name="b"><q value="1"/></tool_action>!';
    const expected = [text('<tool_action name="a">'), call('ta_1', 'b', { q: '1' }), text('!')];
    expect(feed([reply])).toEqual(expected);
    expect(feed(Array.from(reply))).toEqual(expected);
    expect(feed(['<tool_action name="a"><tool_ac', 'tion name="b"/>'])).toEqual([text('<tool_action name="a">'), call('ta_1', 'b', {})]);
  });

  it('finds a tag right after a "<" that was not one', () => {
    expect(feed(['<', '<tool_action name="t"/>'])).toEqual([text('<'), call('ta_1', 't', {})]);
  });

  it('does not end a tag at "</tool_action>" inside a quoted value', () => {
    const reply = '<tool_action name="echo"><s value="</tool_action>" /></tool_action>';
    expect(feed([reply])).toEqual([call('ta_1', 'echo', { s: '</tool_action>' })]);
  });

  it('passes everything through as text when parsing is disabled', () => {
    const d = detector({ enabled: false });
    const chunk = 'x<tool_action name="t"><q value="1"/></tool_action>';
    expect(d.push(chunk)).toEqual([text(chunk)]);
    expect(d.push('<tool_action name="')).toEqual([text('<tool_action name="')]);
    expect(d.end()).toEqual([]);
  });

  it('releases a candidate longer than the cap as text and keeps detecting after it', () => {
    const long = `<tool_action name="t"><q value="${'v'.repeat(200)}`;
    const next = '<tool_action name="u"/>';
    const out = feed([long, '"/></tool_action>', next], { maxTagLength: 100 });
    expect(out).toEqual([text(`${long}"/></tool_action>`), call('ta_1', 'u', {})]);
  });

  it('generates a distinct ta_ id per call by default', () => {
    const d = new StreamingToolActionDetector();
    const out = d.push('<tool_action name="t"/><tool_action name="t"/>');
    const ids = out.map((o) => (o.type === 'tool_call' ? o.call.id : ''));
    expect(ids).toHaveLength(2);
    expect(ids[0]).toMatch(/^ta_/);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it('splits a whole reply like the stream does', () => {
    expect(splitToolActions('hi <tool_action name="t"/>', { newId: () => 'id' })).toEqual([text('hi '), call('id', 't', {})]);
  });
});

describe('StreamingToolActionDetector raw tags', () => {
  it('keeps the tag exactly as written, split over chunks', () => {
    const d = detector();
    const tag = '<tool_action name="x"><q value="a &amp; b" /></tool_action>';
    const out = [...d.push('pre ' + tag.slice(0, 17)), ...d.push(tag.slice(17) + ' post'), ...d.end()];
    expect(out.find((o) => o.type === 'tool_call')).toMatchObject({ raw: tag, call: { arguments: { q: 'a & b' } } });
  });
});
