/** Reading and writing complete `<tool_action>` tags; the grammar itself is in tool-action-recognizer.ts. */
import { isSpace, MAX_ARG_NAME_LENGTH, Step, TOOL_ACTION_TAG, ToolActionRecognizer, type ToolActionEvents } from './tool-action-recognizer.js';

export type ToolActionParseResult =
  | { ok: true; name: string; arguments: Record<string, string> }
  | { ok: false; error: string };

const TOOL_ATTRIBUTE = 0;
const ARG_ATTRIBUTE = 1;
const ARG_OPEN = 2;
const ARG_TEXT = 3;
const ARG_CLOSE = 4;
const MARK_SIZE = 5;

function fail(error: string): ToolActionParseResult {
  return { ok: false, error };
}

/**
 * Notes where a tag's parts lie while the recogniser runs, so that a complete tag is read
 * without being scanned a second time.
 */
export class ToolActionRecorder implements ToolActionEvents {
  /** `MARK_SIZE` numbers per mark: its kind, then up to four positions. */
  private readonly marks: number[] = [];

  reset(): void {
    this.marks.length = 0;
  }

  attribute(inArg: boolean, nameStart: number, nameEnd: number, valueStart: number, valueEnd: number): void {
    this.marks.push(inArg ? ARG_ATTRIBUTE : TOOL_ATTRIBUTE, nameStart, nameEnd, valueStart, valueEnd);
  }

  argOpen(nameStart: number, nameEnd: number): void {
    this.marks.push(ARG_OPEN, nameStart, nameEnd, 0, 0);
  }

  argText(start: number, end: number): void {
    this.marks.push(ARG_TEXT, start, end, 0, 0);
  }

  argClose(): void {
    this.marks.push(ARG_CLOSE, 0, 0, 0, 0);
  }

  /**
   * Reads the recorded tag.
   *
   * @param source the tag's text, starting at its '<'
   */
  read(source: string): ToolActionParseResult {
    const marks = this.marks;
    const args: Record<string, string> = {};
    const toolAttributes: string[] = [];
    let toolName: string | undefined;
    let element = '';
    let elementAttributes: string[] = [];
    let nameAttribute: string | undefined;
    let value: string | undefined;
    let text: string | undefined;
    for (let k = 0; k < marks.length; k += MARK_SIZE) {
      const kind = marks[k];
      if (kind === TOOL_ATTRIBUTE || kind === ARG_ATTRIBUTE) {
        const attribute = source.slice(marks[k + 1], marks[k + 2]);
        const seen = kind === ARG_ATTRIBUTE ? elementAttributes : toolAttributes;
        if (seen.includes(attribute)) return fail(`duplicate attribute "${attribute}"`);
        seen.push(attribute);
        if (attribute !== 'name' && attribute !== 'value') continue;
        const attributeValue = unescapeXml(source.slice(marks[k + 3], marks[k + 4]));
        if (kind === TOOL_ATTRIBUTE) {
          if (attribute === 'name') toolName = attributeValue;
        } else if (attribute === 'name') nameAttribute = attributeValue;
        else value = attributeValue;
      } else if (kind === ARG_OPEN) {
        element = source.slice(marks[k + 1], marks[k + 2]);
        elementAttributes = [];
        nameAttribute = value = text = undefined;
      } else if (kind === ARG_TEXT) {
        text = unescapeXml(source.slice(marks[k + 1], marks[k + 2]));
      } else {
        const name = element === 'arg' && nameAttribute !== undefined ? nameAttribute.trim() : element;
        if (name === '') return fail('an <arg> has an empty name');
        if (value !== undefined && text !== undefined && text.trim() !== '') {
          return fail(`argument "${name}" has both a value attribute and text`);
        }
        const argValue = value ?? text;
        if (argValue === undefined) return fail(`argument "${name}" has no value`);
        if (Object.hasOwn(args, name)) return fail(`duplicate argument "${name}"`);
        // Assigning "__proto__" would set the prototype instead of adding the argument.
        if (name === '__proto__') Object.defineProperty(args, name, { value: argValue, enumerable: true, writable: true, configurable: true });
        else args[name] = argValue;
      }
    }
    const name = toolName?.trim();
    if (!name) return fail('the tag has no name attribute');
    return { ok: true, name, arguments: args };
  }
}

/**
 * Parses one complete `<tool_action>` tag (surrounding whitespace allowed).
 *
 * @returns the tool name and its string arguments, or `{ ok: false, error }` when the text is
 *   not exactly one well-formed tag. Never throws.
 */
export function parseToolAction(text: string): ToolActionParseResult {
  let start = 0;
  let end = text.length;
  while (start < end && isSpace(text.charCodeAt(start))) start++;
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
  if (!text.startsWith('<tool_action', start)) return fail('text does not start with <tool_action');
  const source = text.slice(start, end);
  const recorder = new ToolActionRecorder();
  const recognizer = new ToolActionRecognizer(recorder);
  recognizer.reset();
  const stop = recognizer.advance(source, 1);
  if (recognizer.result === Step.More) return fail('the tag is not closed');
  if (recognizer.result !== Step.Done) return fail(`unexpected ${JSON.stringify(source[stop])} at offset ${stop}`);
  if (stop !== source.length) return fail('text continues after the tag');
  return recorder.read(source);
}

const NAMED_ENTITIES = new Map([
  ['lt', '<'],
  ['gt', '>'],
  ['amp', '&'],
  ['quot', '"'],
  ['apos', "'"],
]);
const DECIMAL_REFERENCE = /^#[0-9]{1,7}$/;
const HEX_REFERENCE = /^#[xX][0-9a-fA-F]{1,6}$/;
/** `&#x10FFFF;` is the longest entity we resolve. */
const MAX_ENTITY_LENGTH = 10;

/** Resolves the five XML entities and numeric references; anything else (`AT&T`) stays as written. */
export function unescapeXml(value: string): string {
  let amp = value.indexOf('&');
  if (amp === -1) return value;
  let out = '';
  let copied = 0;
  while (amp !== -1) {
    let semi = amp + 2;
    const limit = Math.min(value.length, amp + MAX_ENTITY_LENGTH);
    while (semi < limit && value.charCodeAt(semi) !== 59) semi++;
    const decoded = semi < limit ? decodeEntity(value.slice(amp + 1, semi)) : undefined;
    if (decoded === undefined) {
      amp = value.indexOf('&', amp + 1);
      continue;
    }
    out += value.slice(copied, amp) + decoded;
    copied = semi + 1;
    amp = value.indexOf('&', copied);
  }
  return copied === 0 ? value : out + value.slice(copied);
}

function decodeEntity(body: string): string | undefined {
  const named = NAMED_ENTITIES.get(body);
  if (named !== undefined) return named;
  let code: number;
  if (DECIMAL_REFERENCE.test(body)) code = Number.parseInt(body.slice(1), 10);
  else if (HEX_REFERENCE.test(body)) code = Number.parseInt(body.slice(2), 16);
  else return undefined;
  const valid = code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
  return valid ? String.fromCodePoint(code) : undefined;
}

/** Escapes a value for a double-quoted attribute. */
export function escapeXmlAttribute(value: string): string {
  return value.replace(/[&<>"]/g, (ch) => (ch === '&' ? '&amp;' : ch === '<' ? '&lt;' : ch === '>' ? '&gt;' : '&quot;'));
}

const ELEMENT_NAME = /^[A-Za-z_:\u0080-\uffff][A-Za-z0-9_:.\-\u0080-\uffff]*$/;

/** One argument line: `<query value="x" />`, or `<arg name="..." value="x" />` when the name cannot be an element. */
export function formatToolActionArg(name: string, value: string): string {
  const asElement = ELEMENT_NAME.test(name) && name !== 'arg' && name !== TOOL_ACTION_TAG && name.length <= MAX_ARG_NAME_LENGTH;
  return asElement
    ? `<${name} value="${escapeXmlAttribute(value)}" />`
    : `<arg name="${escapeXmlAttribute(name)}" value="${escapeXmlAttribute(value)}" />`;
}

/** A complete tag that `parseToolAction` reads back as `{ name, arguments }`. */
export function formatToolAction(name: string, args: Record<string, string>): string {
  const lines = Object.entries(args).map(([key, value]) => `  ${formatToolActionArg(key, value)}`);
  return [`<tool_action name="${escapeXmlAttribute(name)}">`, ...lines, '</tool_action>'].join('\n');
}
