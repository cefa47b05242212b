/**
 * The `<tool_action>` tag grammar, shared by the whole-text parser and the
 * streaming detector so that both accept exactly the same tags:
 *
 *   tag   := '<tool_action' attrs ( '/>' | '>' ( WS | arg )* '</tool_action' WS? '>' )
 *   arg   := '<' NAME attrs ( '/>' | '>' TEXT '</' NAME WS? '>' )
 *   attrs := ( WS | NAME WS? '=' WS? ( '"' [^"]* '"' | "'" [^']* "'" ) )*
 *
 * An argument is `<query value="x" />` (the form the tool prompt teaches), `<arg name="query" value="x" />`,
 * either of them with an end tag instead of `/>`, or `<query>x</query>` (TEXT has no '<').
 * Values are XML-unescaped and stay strings (`limit: "5"`): the dispatcher coerces them to the schema's types. One stray
 * quote right after a value is ignored (`value="test""`), a slip models make.
 */

const LT = 60;
const GT = 62;
const SLASH = 47;
const EQUALS = 61;
const DOUBLE_QUOTE = 34;
const SINGLE_QUOTE = 39;

export const TOOL_ACTION_TAG = 'tool_action';
const TAG_CODES = Array.from(TOOL_ACTION_TAG, (ch) => ch.charCodeAt(0));
export const MAX_ARG_NAME_LENGTH = 256;

export function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13;
}

function isNameStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58 || c >= 0x80;
}

function isNameChar(c: number): boolean {
  return isNameStart(c) || (c >= 48 && c <= 57) || c === 45 || c === 46;
}

/** Where `ToolActionRecognizer.advance` stopped. */
export const Step = {
  /** Still a possible tag: feed more text. */
  More: 0,
  /** A complete tag ends just before the returned index. */
  Done: 1,
  /** The character at the returned index cannot continue a tag: what came before it is plain text. */
  Reject: 2,
  /** `<tool_action` opened again inside this tag: its 12 characters before the returned index start a fresh one. */
  Nested: 3,
} as const;
export type Step = (typeof Step)[keyof typeof Step];

/** Receives the positions of a tag's parts while it is recognised (parser mode). */
export interface ToolActionEvents {
  /** A new tag starts: forget the last one. */
  reset(): void;
  attribute(inArg: boolean, nameStart: number, nameEnd: number, valueStart: number, valueEnd: number): void;
  argOpen(nameStart: number, nameEnd: number): void;
  argText(start: number, end: number): void;
  argClose(): void;
}

const REJECTED = -1;
const S_OPEN_LITERAL = 0;
const S_OPEN_LITERAL_END = 1;
const S_TAG = 2;
const S_ATTR_NAME = 3;
const S_ATTR_EQUALS = 4;
const S_ATTR_QUOTE = 5;
const S_ATTR_VALUE = 6;
const S_AFTER_VALUE = 7;
const S_SLASH = 8;
const S_BODY = 9;
const S_BODY_LT = 10;
const S_ARG_NAME = 11;
const S_ARG_TEXT = 12;
const S_ARG_END_LT = 13;
const S_ARG_END_NAME = 14;
const S_ARG_END_SPACE = 15;
const S_CLOSE_LITERAL = 16;
const S_CLOSE_SPACE = 17;

/**
 * Recognises one tag incrementally, holding no text, so a tag split across any number of
 * chunks costs the same as a whole one. Positions reported to the events count from the
 * tag's '<'. After `Done`, `Reject` or `Nested` it must be reset before further use.
 */
export class ToolActionRecognizer {
  /** Why the last `advance` stopped. */
  result: Step = Step.More;
  private state = S_OPEN_LITERAL;
  private matched = 0;
  private pos = 0;
  private inArg = false;
  private quote = 0;
  private attrNameStart = 0;
  private attrNameEnd = 0;
  private valueStart = 0;
  private argNameStart = 0;
  private argTextStart = 0;
  private readonly argName: number[] = [];

  constructor(private readonly events: ToolActionEvents | null = null) {}

  /** Starts a new tag whose '<' has just been seen. */
  reset(): void {
    this.state = S_OPEN_LITERAL;
    this.matched = 0;
    this.pos = 1;
    this.inArg = false;
    this.result = Step.More;
    this.events?.reset();
  }

  /** Starts a new tag whose `<tool_action` has just been seen (after `Step.Nested`). */
  resetAfterOpenLiteral(): void {
    this.reset();
    this.state = S_OPEN_LITERAL_END;
    this.pos = 1 + TAG_CODES.length;
  }

  /**
   * Consumes `text[from..to)` until the tag completes, fails or the text runs out.
   *
   * @returns the index where it stopped; `result` says why
   */
  advance(text: string, from: number, to: number = text.length): number {
    const off = this.pos - from;
    const events = this.events;
    let state = this.state;
    let result: Step = Step.More;
    let i = from;
    scan: while (i < to) {
      if (state === S_ATTR_VALUE) {
        const end = text.indexOf(this.quote === DOUBLE_QUOTE ? '"' : "'", i);
        if (end === -1 || end >= to) {
          i = to;
          break;
        }
        events?.attribute(this.inArg, this.attrNameStart, this.attrNameEnd, this.valueStart, end + off);
        state = S_AFTER_VALUE;
        i = end + 1;
        continue;
      }
      if (state === S_ARG_TEXT) {
        const end = text.indexOf('<', i);
        if (end === -1 || end >= to) {
          i = to;
          break;
        }
        events?.argText(this.argTextStart, end + off);
        state = S_ARG_END_LT;
        i = end + 1;
        continue;
      }
      const c = text.charCodeAt(i);
      switch (state) {
        case S_OPEN_LITERAL:
          if (c !== TAG_CODES[this.matched]) state = REJECTED;
          else if (++this.matched === TAG_CODES.length) state = S_OPEN_LITERAL_END;
          break;
        case S_OPEN_LITERAL_END:
          state = isSpace(c) ? S_TAG : c === GT || c === SLASH ? this.inTag(c, i + off) : REJECTED;
          break;
        case S_TAG:
          state = this.inTag(c, i + off);
          break;
        case S_ATTR_NAME:
          if (isNameChar(c)) break;
          this.attrNameEnd = i + off;
          state = isSpace(c) ? S_ATTR_EQUALS : c === EQUALS ? S_ATTR_QUOTE : REJECTED;
          break;
        case S_ATTR_EQUALS:
          if (c === EQUALS) state = S_ATTR_QUOTE;
          else if (!isSpace(c)) state = REJECTED;
          break;
        case S_ATTR_QUOTE:
          if (c === DOUBLE_QUOTE || c === SINGLE_QUOTE) {
            this.quote = c;
            this.valueStart = i + off + 1;
            state = S_ATTR_VALUE;
          } else if (!isSpace(c)) state = REJECTED;
          break;
        case S_AFTER_VALUE:
          // A doubled closing quote (`value="test"" />`, a slip models make) is forgiven.
          state = c === this.quote ? S_TAG : this.inTag(c, i + off);
          break;
        case S_SLASH:
          if (c !== GT) state = REJECTED;
          else if (this.inArg) state = this.closeArg();
          else {
            result = Step.Done;
            i++;
            break scan;
          }
          break;
        case S_BODY:
          if (c === LT) state = S_BODY_LT;
          else if (!isSpace(c)) state = REJECTED;
          break;
        case S_BODY_LT:
          if (c === SLASH) {
            this.matched = 0;
            state = S_CLOSE_LITERAL;
          } else if (isNameStart(c)) {
            this.argName.length = 0;
            this.argName.push(c);
            this.argNameStart = i + off;
            state = S_ARG_NAME;
          } else state = REJECTED;
          break;
        case S_ARG_NAME:
          if (isNameChar(c)) {
            if (this.argName.length >= MAX_ARG_NAME_LENGTH) state = REJECTED;
            else this.argName.push(c);
            break;
          }
          if (!isSpace(c) && c !== SLASH && c !== GT) {
            state = REJECTED;
            break;
          }
          if (this.argNameIsToolAction()) {
            result = Step.Nested;
            break scan;
          }
          this.inArg = true;
          events?.argOpen(this.argNameStart, i + off);
          state = isSpace(c) ? S_TAG : this.inTag(c, i + off);
          break;
        case S_ARG_END_LT:
          if (c !== SLASH) state = REJECTED;
          else {
            this.matched = 0;
            state = S_ARG_END_NAME;
          }
          break;
        case S_ARG_END_NAME:
          if (this.matched < this.argName.length) {
            if (c !== this.argName[this.matched++]) state = REJECTED;
          } else if (isSpace(c)) state = S_ARG_END_SPACE;
          else state = c === GT ? this.closeArg() : REJECTED;
          break;
        case S_ARG_END_SPACE:
          if (c === GT) state = this.closeArg();
          else if (!isSpace(c)) state = REJECTED;
          break;
        case S_CLOSE_LITERAL:
          if (c !== TAG_CODES[this.matched]) state = REJECTED;
          else if (++this.matched === TAG_CODES.length) state = S_CLOSE_SPACE;
          break;
        case S_CLOSE_SPACE:
          if (c === GT) {
            result = Step.Done;
            i++;
            break scan;
          }
          if (!isSpace(c)) state = REJECTED;
          break;
        default:
          state = REJECTED;
      }
      if (state === REJECTED) {
        result = Step.Reject;
        break;
      }
      i++;
    }
    this.state = state;
    this.pos = i + off;
    this.result = result;
    return i;
  }

  /** Between the attributes of a start tag (the tool's or an argument's); returns the next state. */
  private inTag(c: number, pos: number): number {
    if (isSpace(c)) return S_TAG;
    if (c === GT) {
      if (!this.inArg) return S_BODY;
      this.argTextStart = pos + 1;
      return S_ARG_TEXT;
    }
    if (c === SLASH) return S_SLASH;
    if (!isNameStart(c)) return REJECTED;
    this.attrNameStart = pos;
    return S_ATTR_NAME;
  }

  private closeArg(): number {
    this.events?.argClose();
    this.inArg = false;
    return S_BODY;
  }

  private argNameIsToolAction(): boolean {
    const name = this.argName;
    if (name.length !== TAG_CODES.length) return false;
    for (let i = 0; i < name.length; i++) if (name[i] !== TAG_CODES[i]) return false;
    return true;
  }
}
