import { escapeXmlAttribute, formatToolAction, formatToolActionArg, parseToolAction, unescapeXml } from './tool-action-parser.js';

describe('parseToolAction', () => {
  it('reads the value-attribute form: one element per argument with a value attribute', () => {
    const tag = '<tool_action name="vector-search">\n  <query value="读取文件" />\n  <limit value="5" />\n</tool_action>';
    expect(parseToolAction(tag)).toEqual({ ok: true, name: 'vector-search', arguments: { query: '读取文件', limit: '5' } });
  });

  it('reads the <arg name value> form, end-tag variants, text content and single quotes', () => {
    const tag =
      '<tool_action name="t"><arg name="a" value="1"/><b value="2"></b><arg name="c" value="3"></arg>' +
      "<d>four &amp; more</d><e value='5' /></tool_action>";
    expect(parseToolAction(tag)).toEqual({ ok: true, name: 't', arguments: { a: '1', b: '2', c: '3', d: 'four & more', e: '5' } });
  });

  it('reads a self-closing tag as a call without arguments, and tolerates surrounding whitespace', () => {
    expect(parseToolAction('  <tool_action name="now" />\n')).toEqual({ ok: true, name: 'now', arguments: {} });
    expect(parseToolAction('<tool_action name = "now"></tool_action >')).toEqual({ ok: true, name: 'now', arguments: {} });
  });

  it('XML-unescapes attribute values, named and numeric', () => {
    const tag = '<tool_action name="a&amp;b"><q value="&lt;x&gt; &quot;y&quot; &apos;z&apos; &#20013;&#x6587; &#x1F600;" /></tool_action>';
    expect(parseToolAction(tag)).toEqual({ ok: true, name: 'a&b', arguments: { q: `<x> "y" 'z' 中文 😀` } });
  });

  it('keeps a value with raw "<", ">" or an unknown entity as written', () => {
    const tag = '<tool_action name="t"><q value="a < b > c AT&T &nbsp; &#0; &#xD800; &constructor; &#x110000; &amp" /></tool_action>';
    const kept = 'a < b > c AT&T &nbsp; &#0; &#xD800; &constructor; &#x110000; &amp';
    expect(parseToolAction(tag)).toEqual({ ok: true, name: 't', arguments: { q: kept } });
  });

  it('keeps a "__proto__" argument as data', () => {
    const parsed = parseToolAction('<tool_action name="t"><__proto__ value="x" /></tool_action>');
    expect(parsed.ok && Object.getOwnPropertyNames(parsed.arguments)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(parsed.ok ? parsed.arguments : null)).toBe(Object.prototype);
  });

  it.each([
    ['no name', '<tool_action><q value="1" /></tool_action>', /no name/],
    ['empty name', '<tool_action name=" "></tool_action>', /no name/],
    ['duplicate argument', '<tool_action name="t"><q value="1" /><arg name="q" value="2" /></tool_action>', /duplicate argument "q"/],
    ['duplicate attribute', '<tool_action name="t" name="u"></tool_action>', /duplicate attribute/],
    ['argument without value', '<tool_action name="t"><q /></tool_action>', /"q" has no value/],
    ['value and text', '<tool_action name="t"><q value="1">2</q></tool_action>', /both/],
    ['unclosed', '<tool_action name="t"><q value="1" />', /not closed/],
    ['text inside the tag', '<tool_action name="t">please</tool_action>', /unexpected "p"/],
    ['mismatched end tag', '<tool_action name="t"><q>1</r></tool_action>', /unexpected "r"/],
    ['unquoted attribute', '<tool_action name=t></tool_action>', /unexpected "t"/],
    ['text after the tag', '<tool_action name="t" /> more', /continues after/],
    ['not a tag', 'hello', /does not start/],
    ['another tag', '<tool_actions name="t" />', /unexpected "s"/],
  ])('fails without throwing on %s', (_case, tag, error) => {
    const parsed = parseToolAction(tag);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toMatch(error);
  });
});

describe('unescapeXml / escapeXmlAttribute', () => {
  it('round-trips any value through an attribute', () => {
    const value = `a<b>&c"d'e &amp; &#38; \n中`;
    expect(unescapeXml(escapeXmlAttribute(value))).toBe(value);
    expect(escapeXmlAttribute('<&>"')).toBe('&lt;&amp;&gt;&quot;');
  });
});

describe('formatToolAction', () => {
  it('writes a tag that parses back to the same call', () => {
    const args = { query: 'say "hi" & <bye>', 'two words': 'x', arg: 'y', tool_action: 'z', '9lives': 'w' };
    const tag = formatToolAction('web.search', args);
    expect(parseToolAction(tag)).toEqual({ ok: true, name: 'web.search', arguments: args });
  });

  it('uses the element form when the name allows it and the <arg> form otherwise', () => {
    expect(formatToolActionArg('limit', '5')).toBe('<limit value="5" />');
    expect(formatToolActionArg('two words', '5')).toBe('<arg name="two words" value="5" />');
  });
});
