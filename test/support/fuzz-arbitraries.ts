/**
 * fast-check arbitraries for the fuzz suite: odd strings and numbers, JSON documents written by
 * hand (duplicate keys, prototype keys, literal numbers such as 1e999), request parts, WebSocket
 * frames, tool arguments and loopback-only URLs.
 *
 * Two rules hold for everything generated here:
 * - nothing contains `[[` (the scripted LLM's directives) unless a test means it to;
 * - every URL points at a loopback address (see {@link assertLoopbackOnly}).
 */
import fc from 'fast-check';
import { encodeFrame } from './fuzz-wire.js';

// ---------------------------------------------------------------------------------------------
// Strings and numbers

/** Strings that have broken parsers, routers, validators and path resolvers before. */
export const NASTY_STRINGS: readonly string[] = [
  '', ' ', '\u0000', 'null', 'undefined', 'NaN', 'true', 'false', '[]', '{}', '-1', '0', '-0', '1e308', '1e999',
  '99999999999999999999', '4294967295', '4294967296', '9007199254740993', '0x10', '0o7', '1_000', '+1', '1.5', '.5', '5.',
  ' 5', '5 ', '5abc', '0005', '١٢٣', '１２３', 'Infinity', '-Infinity',
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__',
  '../../etc/passwd', '..', '.', '...', './', '..%2f..%2f', '%2e%2e%2f', '%252e%252e%252f', '%00', '%', '%zz', '%E0%A4%A', '%ff',
  '/', '//', '\\', '..\\..\\', '?', '#', '&', '=', ';', ',', '"', "'", '`', '<', '>', '{', '}', '|', '^', '~',
  '\u202e', '\ud800', '\udfff', '\ud83d', '😀', '👩‍👩‍👧‍👦', 'é', 'é', 'ǅ', 'İ', 'ß', '\u0000\u0001\u001f\u007f', '\r\n', '\r', '\n', '\t', '\u2028\u2029', '\ufeff', '\uffff',
  '\r\nX-Injected: 1', '<script>alert(1)</script>', "' OR 1=1 --", '${7*7}', '{{7*7}}', '$(id)', '`id`', '%s%s%s%n', '\\u0000',
  'a'.repeat(64), 'a'.repeat(65), 'b'.repeat(300), 'default', 'DEFAULT', 'default ', 'approve', 'APPROVE', 'approve ', 'reject\u0000',
];

const SPECIAL_CHARS = fc.constantFrom('\u0000', '\ud800', '\udc00', 'a', 'Z', '0', '%', '.', '/', '\\', 'é', '😀', '\u202e', ' ', '"', '\n', ':', '_', '-', '[', ']');

/** Any string worth trying where a short string is expected. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: SPECIAL_CHARS, maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom(100, 1_000, 10_000, 70_000).map((n) => 'x'.repeat(n)) },
);

/** Strings that look like numbers, in every spelling a parser might take or choke on. */
export const numberLike: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('0', '1', '-1', '1e308', '-1e308', '1e999', '99999999999999999999', '-99999999999999999999', '4294967295', '4294967296', '9007199254740991', '9007199254740993', '2147483648', '0.5', '-0', '1e-308', '5e-324', 'NaN', 'Infinity', '0x10', '1e3', '', ' ', '5abc', '１', '0b1', '00000000000000000001', '1.0', '+5'),
  fc.integer().map(String),
  fc.double().map(String),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
);

/** Keys that pollute prototypes when a parser or merger trusts them. */
export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'] as const;
/** Marker placed only inside prototype-polluting objects: if it ever shows up in an unrelated answer, a prototype was polluted. */
export const POLLUTION_MARKER = 'fzpollutedmarker';

// ---------------------------------------------------------------------------------------------
// JSON written by hand

/**
 * A JSON document as a tree, so it can carry duplicate keys, `__proto__` keys and literal
 * numbers. `deep` stands for a nesting too deep to keep as a tree (it is written out only as text,
 * so neither fast-check nor a client library recurses through it).
 */
export type Json = null | boolean | string | { num: string } | { deep: number; arrays: boolean } | Json[] | { obj: Array<[string, Json]> };

export function isObj(j: Json): j is { obj: Array<[string, Json]> } {
  return j !== null && typeof j === 'object' && !Array.isArray(j) && 'obj' in j;
}

/** The JSON text of a tree (numbers are written verbatim, so `1e999` and `-0` stay as they are). */
export function toJsonText(j: Json): string {
  if (j === null || typeof j === 'boolean') return String(j);
  if (typeof j === 'string') return JSON.stringify(j);
  if (Array.isArray(j)) return `[${j.map(toJsonText).join(',')}]`;
  if ('num' in j) return j.num;
  if ('deep' in j) return j.arrays ? `${'['.repeat(j.deep)}"deep"${']'.repeat(j.deep)}` : `${'{"a":'.repeat(j.deep)}"deep"${'}'.repeat(j.deep)}`;
  return `{${j.obj.map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(',')}}`;
}

/** The value JSON.parse makes of a tree (own `__proto__` properties included). */
export function toJs(j: Json): unknown {
  return JSON.parse(toJsonText(j));
}

export const obj = (entries: Array<[string, Json]>): Json => ({ obj: entries });

const jsonNumber: fc.Arbitrary<Json> = numberLike.filter((s) => /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(s)).map((num) => ({ num }));

const plainKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom('message', 'session_id', 'assistant_id', 'type', 'payload', 'run_id', 'after_seq', 'decision', 'request_id', 'title', 'limit', 'offset', 'isAdmin', 'role', 'user_id', 'tenant_id') },
  { weight: 1, arbitrary: oddString.filter((s) => s.length < 200 && !(PROTO_KEYS as readonly string[]).includes(s)) },
);

/** Values inside prototype keys: they carry the marker so pollution is visible later. */
const pollutingValue: fc.Arbitrary<Json> = fc.constantFrom<Json>(
  obj([['title', POLLUTION_MARKER], ['isAdmin', true], ['role', 'admin'], ['message', POLLUTION_MARKER]]),
  obj([['prototype', obj([['polluted', POLLUTION_MARKER]])]]),
  obj([['toString', POLLUTION_MARKER]]),
  obj([]),
  [],
  POLLUTION_MARKER,
);
const protoEntry: fc.Arbitrary<[string, Json]> = fc.tuple(fc.constantFrom(...PROTO_KEYS), pollutingValue);

/** Nesting deep enough to overflow recursive walkers (validators, transformers, encoders). */
export const deepJson: fc.Arbitrary<Json> = fc.record({ deep: fc.constantFrom(50, 500, 2_000, 20_000), arrays: fc.boolean() });

export interface JsonArbitraries {
  /** Any JSON value, nested a few levels, with odd keys and duplicates. */
  tree: fc.Arbitrary<Json>;
  /** A field value: usually odd, sometimes the valid one. */
  field(valid: fc.Arbitrary<Json>, validWeight?: number): fc.Arbitrary<Json>;
  /**
   * A JSON object body built from a template of fields: each present or missing, valid or odd,
   * plus stray keys, sometimes duplicated.
   */
  objectBody(fields: Record<string, fc.Arbitrary<Json>>): fc.Arbitrary<Json>;
}

/**
 * JSON arbitraries with prototype keys (`__proto__`, `constructor`, `prototype`) never, sometimes,
 * or always (at least one at the top of every object body). Keeping them apart lets a bug they
 * trigger be reported without hiding every other bug of the same entry point.
 */
export function jsonArbitraries(proto: 'never' | 'sometimes' | 'always'): JsonArbitraries {
  const withProto = proto !== 'never';
  const tree: fc.Arbitrary<Json> = fc.letrec<{ value: Json; entry: [string, Json] }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constant(null),
      fc.boolean(),
      oddString,
      jsonNumber,
      fc.array(tie('value'), { maxLength: 4 }),
      fc.array(tie('entry'), { maxLength: 4 }).map(obj),
    ),
    entry: withProto ? fc.oneof({ weight: 4, arbitrary: fc.tuple(plainKey, tie('value')) }, { weight: 1, arbitrary: protoEntry }) : fc.tuple(plainKey, tie('value')),
  })).value;
  const field = (valid: fc.Arbitrary<Json>, validWeight = 1) =>
    fc.oneof({ weight: validWeight, arbitrary: valid }, { weight: 3, arbitrary: tree }, { weight: 1, arbitrary: fc.constantFrom<Json>(null, true, { num: '1e999' }, { num: '-1' }, [], obj([])) });
  const stray = withProto ? fc.oneof({ weight: 3, arbitrary: fc.tuple(plainKey, tree) }, { weight: 1, arbitrary: protoEntry }) : fc.tuple(plainKey, tree);
  const objectBody = (fields: Record<string, fc.Arbitrary<Json>>) => {
    const names = Object.keys(fields);
    return fc
      .tuple(
        fc.tuple(...names.map((n) => fc.option(fields[n], { nil: undefined, freq: 4 }))),
        fc.array(stray, { maxLength: 3 }),
        proto === 'always' ? fc.array(protoEntry, { minLength: 1, maxLength: 2 }) : fc.constant([] as Array<[string, Json]>),
        fc.boolean(),
      )
      .map(([values, extra, protos, extraFirst]) => {
        const own: Array<[string, Json]> = [];
        values.forEach((v, i) => v !== undefined && own.push([names[i], v]));
        const rest = [...extra, ...protos];
        return obj(extraFirst ? [...rest, ...own] : [...own, ...rest]);
      });
  };
  return { tree, field, objectBody };
}

const sometimes = jsonArbitraries('sometimes');
export const jsonTree = sometimes.tree;
export const field = sometimes.field;
export const objectBody = sometimes.objectBody;

// ---------------------------------------------------------------------------------------------
// HTTP request parts

export type BodySpec =
  | { kind: 'none' }
  | { kind: 'json'; json: Json }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; bytes: number[] }
  | { kind: 'big'; size: number };

/** Raw bytes of a body spec. */
export function bodyBytes(spec: BodySpec): Buffer | undefined {
  switch (spec.kind) {
    case 'none':
      return undefined;
    case 'json':
      return Buffer.from(toJsonText(spec.json), 'utf8');
    case 'text':
      return Buffer.from(spec.text, 'utf8');
    case 'bytes':
      return Buffer.from(spec.bytes);
    case 'big':
      return Buffer.from(`{"message":"${'y'.repeat(spec.size)}"}`);
  }
}

const BAD_JSON = ['{', '{"message": "hi"', '{"message": hi}', "{'message': 'hi'}", '{"message": "hi",}', '[1,2', 'nul', '{"a":1}{"b":2}', '\ufeff{"message":"hi"}', '{"message":"\\ud800"}', '{"message":"\\x41"}', '{"__proto__":', '"just a string"', '42', 'null', '[]', 'true', ' ', '{"message":"a\u0000b"}', '{"message"\u0000:"x"}', '{"message": 1e999}', '{"message": -0}', '{"message": 0x10}', 'NaN'];

/** A request body: a JSON object from the template, any JSON, bad JSON, raw bytes or a huge one. */
export function bodySpec(template: fc.Arbitrary<Json>, tree: fc.Arbitrary<Json> = jsonTree): fc.Arbitrary<BodySpec> {
  return fc.oneof(
    { weight: 8, arbitrary: template.map((json) => ({ kind: 'json' as const, json })) },
    { weight: 2, arbitrary: tree.map((json) => ({ kind: 'json' as const, json })) },
    { weight: 2, arbitrary: fc.constantFrom(...BAD_JSON).map((text) => ({ kind: 'text' as const, text })) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => ({ kind: 'bytes' as const, bytes: [...b] })) },
    { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
    { weight: 1, arbitrary: fc.constantFrom(70 * 1024, 1_100_000).map((size) => ({ kind: 'big' as const, size })) },
  );
}

export const CONTENT_TYPES = [
  'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json; charset=utf-16', 'application/json; charset=latin1',
  'application/json; charset=bogus', 'application/vnd.api+json', 'application/merge-patch+json', 'text/plain', 'text/json', 'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz', 'application/octet-stream', '', 'json', '*/*', 'application/json, text/plain', 'application/json;;;', 'application/json; boundary=\u00e9',
];

/** Path-parameter text as it appears in the URL: encoded, half-encoded or raw. */
export const pathParam: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: oddString.map((s) => encodeURIComponent(safeForUri(s))) },
  // Half-encoded: ASCII specials stay raw, the rest is escaped so the request still parses.
  { weight: 2, arbitrary: oddString.map((s) => safeForUri(s).replace(/[^\x21-\x7e]|[?#]/gu, (c) => encodeURIComponent(c))) },
  { weight: 1, arbitrary: fc.constantFrom('..', '.', '%2e%2e', '%2F', 'a%2Fb', 'a/b', '%00', '%', '%zz', 'a'.repeat(65), 'a'.repeat(5000), '~', '*', '%C0%AE%C0%AE', '..;', ';x=1', '%5C', '%u002e', 'é', '\u00ff') },
);

/** encodeURIComponent throws on lone surrogates: replace them first. */
export function safeForUri(s: string): string {
  return s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/** A query string (with its `?`, or empty): duplicates, arrays, nested keys, raw bytes. */
export function queryString(keys: string[]): fc.Arbitrary<string> {
  const key = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: fc.constantFrom(...keys).map((k) => `${k}[]`) }, { weight: 1, arbitrary: fc.constantFrom(...keys, ...PROTO_KEYS).map((k) => `${k}[__proto__][x]`) }, { weight: 1, arbitrary: oddString.map((s) => encodeURIComponent(safeForUri(s))) });
  const value = fc.oneof({ weight: 3, arbitrary: numberLike.map((s) => encodeURIComponent(s)) }, { weight: 2, arbitrary: oddString.map((s) => encodeURIComponent(safeForUri(s))) }, { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%00', '+', '&&', '=', '==', '%ff%fe') });
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant('') },
    { weight: 6, arbitrary: fc.array(fc.tuple(key, fc.option(value, { nil: undefined })), { minLength: 1, maxLength: 4 }).map((pairs) => '?' + pairs.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join('&')) },
    { weight: 1, arbitrary: fc.constantFrom('?', '??', '?&', '?=', '?' + 'limit=1&'.repeat(2_000)) },
  );
}

// ---------------------------------------------------------------------------------------------
// WebSocket frames

export interface FrameGen {
  fin: boolean;
  rsv: number;
  opcode: number;
  masked: boolean;
  mask: number[];
  payload: number[];
  lengthForm: 'min' | '16' | '64';
  /** Declared length instead of the real one (as a decimal string, since it may exceed 2^53). */
  lie?: string;
}

const plainJson = jsonArbitraries('never');
const textPayload = fc.oneof(
  fc.constantFrom('{"type":"ping"}', '{"type":"chat","payload":{}}', '{"type":"resume","payload":{"after_seq":-1}}', '{"type":"cancel","payload":{"session_id":"nope"}}', 'not json', '{', '[]', 'null', '"x"', '{"type":"\\ud800"}', '{"type":"hitl_decision","payload":{"request_id":"x","decision":"maybe"}}'),
  plainJson.tree.map(toJsonText),
).map((s) => [...Buffer.from(s, 'utf8')]);

/** One frame, usually almost right, sometimes wrong in one of the ways RFC 6455 forbids. */
export const frameGen: fc.Arbitrary<FrameGen> = fc.record({
  fin: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  rsv: fc.oneof({ weight: 5, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 7 }) }),
  opcode: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(1, 2, 0, 8, 9, 10) }, { weight: 1, arbitrary: fc.constantFrom(3, 4, 5, 6, 7, 11, 12, 13, 14, 15) }),
  masked: fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  mask: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 }),
  payload: fc.oneof(
    { weight: 4, arbitrary: textPayload },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: 40 }).map((b) => [...b]) },
    { weight: 1, arbitrary: fc.constantFrom(126, 200, 70_000).map((n) => new Array<number>(n).fill(0x61)) },
    { weight: 1, arbitrary: fc.constantFrom<number[]>([0x03, 0xe8], [0x03, 0xe8, 0xff, 0xfe], [0x00, 0x00], [0x0b, 0xb8], [0x03], [0xff, 0xff, 0x61]) },
  ),
  lengthForm: fc.oneof({ weight: 8, arbitrary: fc.constant('min' as const) }, { weight: 1, arbitrary: fc.constantFrom('16' as const, '64' as const) }),
  lie: fc.option(fc.constantFrom('0', '1', '125', '65536', '2097152', '4294967296', '9223372036854775807', '18446744073709551615', '9007199254740993'), { nil: undefined, freq: 8 }),
});

/** A frame as it goes on the wire. */
export function frameBytes(f: FrameGen): Buffer {
  return encodeFrame({ fin: f.fin, rsv: f.rsv, opcode: f.opcode, mask: f.masked ? Buffer.from(f.mask) : null, payload: Buffer.from(f.payload), lengthForm: f.lengthForm, declaredLength: f.lie === undefined ? undefined : BigInt(f.lie) });
}

/** Whether a frame is valid for a client to send (masked, no RSV, known opcode, sane control frame). */
export function frameIsValid(f: FrameGen): boolean {
  if (!f.masked || f.rsv !== 0 || f.lie !== undefined) return false;
  if (![0, 1, 2, 8, 9, 10].includes(f.opcode)) return false;
  if (f.opcode >= 8 && (!f.fin || f.payload.length > 125)) return false;
  if (f.lengthForm !== 'min') return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Loopback URLs

/** Every spelling of loopback the suite may use: nothing else is ever generated. */
export const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]', '2130706433', '0x7f000001', '0177.0.0.1', '127.1', '127.0.1', '0x7f.0.0.1', '[::ffff:127.0.0.1]', '[0:0:0:0:0:0:0:1]', 'LOCALHOST', '127.000.000.001', '0x7F000001'] as const;

const LOOPBACK_NORMALISED = new Set(['127.0.0.1', 'localhost', '[::1]', '[::ffff:7f00:1]']);

/**
 * Throws unless every host a URL names (as the WHATWG parser sees it) is loopback. The suite
 * calls it on each URL it hands the agent, so no generated input can reach another address.
 */
export function assertLoopbackOnly(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return; // not a URL at all: nothing to reach
  }
  if (parsed.hostname === '' && (parsed.protocol === 'file:' || parsed.protocol === 'data:')) return;
  if (!LOOPBACK_NORMALISED.has(parsed.hostname)) throw new Error(`fuzz generated a non-loopback URL: ${url} (host ${parsed.hostname})`);
}

/**
 * URLs on loopback only: odd spellings of 127.0.0.1 and ::1, odd ports, paths, queries,
 * userinfo before the host, schemes the guard must refuse. `ports` are the loopback servers
 * the suite runs (an allowlisted target and a canary that must never be reached).
 */
export function loopbackUrl(ports: number[]): fc.Arbitrary<string> {
  const scheme = fc.oneof({ weight: 8, arbitrary: fc.constantFrom('http', 'https', 'HTTP') }, { weight: 1, arbitrary: fc.constantFrom('ftp', 'gopher', 'ws', 'file', 'javascript', 'data') });
  const port = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...ports) }, { weight: 1, arbitrary: fc.constantFrom(0, 1, 22, 80, 443, 6379, 3306, 65535) });
  const path = fc.oneof(
    fc.constantFrom('/', '', '/html', '/json', '/text', '/big', '/binary', '/slow', '/redirect', '/redirect-canary', '/status/500', '/status/404', '/%2e%2e/%2e%2e/etc/passwd', '/a/../../b', '/?x=1#frag', '/\u00e9', '/%00', '//double'),
    oddString.filter((s) => s.length < 300).map((s) => '/' + encodeURIComponent(safeForUri(s))),
  );
  const userinfo = fc.oneof({ weight: 8, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('user@', 'user:pass@', 'evil.example@', '%40@') });
  const url = fc.tuple(scheme, userinfo, fc.constantFrom(...LOOPBACK_HOSTS), port, path).map(([s, u, h, p, pa]) => {
    if (s === 'file') return `file:///tmp/${encodeURIComponent(pa)}`;
    if (s === 'javascript') return 'javascript:alert(1)';
    if (s === 'data') return 'data:text/plain,hello';
    return `${s}://${u}${h}:${p}${pa.startsWith('/') || pa === '' ? pa : '/' + pa}`;
  });
  const weird = fc.constantFrom('', 'http://', 'http:///', '://127.0.0.1', '127.0.0.1', 'http://[::1', 'http://127.0.0.1:99999/', 'http://127.0.0.1:-1/', 'http:\\\\127.0.0.1\\', 'HTTP://LOCALHOST:1/', ' http://127.0.0.1:1/ ', 'http://127.0.0.1:1/\u0000', 'http://127.0.0.1:1/' + 'a'.repeat(10_000));
  return fc.oneof({ weight: 9, arbitrary: url }, { weight: 1, arbitrary: weird }).filter((u) => {
    try {
      assertLoopbackOnly(u);
      return true;
    } catch {
      return false;
    }
  });
}
