import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { ElicitationAction, ElicitationPrompt, EventEnvelope, ExecutionEvent } from '../events/execution-event.js';

/** A person's answer to an elicitation, as the server gets it: `content` only with `accept` of a form. */
export type ElicitationAnswer = { action: 'accept'; content?: Record<string, unknown> } | { action: Exclude<ElicitationAction, 'accept'> };

/** The tool call an elicitation belongs to, and how its events reach the run's stream while the call runs. */
export interface ElicitationCall {
  runId: string;
  sessionId: string;
  toolCallId: string;
  /** Sends an event into the run's stream now, not after the call. */
  emit(build: (envelope: EventEnvelope) => ExecutionEvent): void;
}

/**
 * Asks the person of a run what an MCP server wants to know during a tool call (an elicitation):
 * tells the client (`elicitation_request`), waits for the answer or the expiry, tells the client
 * how it ended (`elicitation`). No answer in time, or `signal` firing (the run cancelled, the
 * server withdrew the request), is `cancel`.
 */
export interface ElicitationHandler {
  ask(prompt: ElicitationPrompt, call: ElicitationCall, signal: AbortSignal): Promise<ElicitationAnswer>;
}

/** One field of a form that does not fit its schema, as the person is told. */
export interface InvalidField {
  field: string;
  problem: string;
}

export type CheckedContent = { ok: true; content: Record<string, unknown> } | { ok: false; fields: InvalidField[] };

const FIELD_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array']);
const FORMATS = new Set(['email', 'uri', 'date', 'date-time']);
const TEXT_KEYWORDS = ['title', 'description'] as const;
const NUMBER_KEYWORDS = ['minLength', 'maxLength', 'minimum', 'maximum', 'minItems', 'maxItems'] as const;

/**
 * The form a server asked for, as DataAgent shows and checks it: a flat object whose fields are
 * strings (with a length, a format, or a choice of values), numbers, integers, booleans, or a
 * multiple choice of strings, with their titles, descriptions and defaults. Keywords outside
 * that (patterns, references, nesting) are dropped, so a server's schema is never compiled as
 * it came.
 * @returns the schema, or why it cannot be shown (the server is told).
 */
export function formSchemaOf(requested: unknown): { ok: true; schema: Record<string, unknown> } | { ok: false; reason: string } {
  const given = requested as { type?: unknown; properties?: unknown; required?: unknown } | null;
  if (!given || typeof given !== 'object' || given.type !== 'object' || !isPlainObject(given.properties)) {
    return { ok: false, reason: 'requestedSchema must be an object schema with properties' };
  }
  const properties: Record<string, Record<string, unknown>> = {};
  for (const [name, field] of Object.entries(given.properties)) {
    const kept = isPlainObject(field) ? formField(field) : null;
    if (!kept) return { ok: false, reason: `field ${name} must be a string, number, integer, boolean or a multiple choice of strings` };
    properties[name] = kept;
  }
  const required = Array.isArray(given.required) ? given.required.filter((r): r is string => typeof r === 'string' && r in properties) : [];
  return { ok: true, schema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}) } };
}

/** One field with only the keywords of MCP's primitive schemas, each of its type; null when it is none of them. */
function formField(field: Record<string, unknown>): Record<string, unknown> | null {
  const type = String(field.type);
  if (!FIELD_TYPES.has(type)) return null;
  const kept: Record<string, unknown> = { type };
  for (const keyword of TEXT_KEYWORDS) if (typeof field[keyword] === 'string') kept[keyword] = field[keyword];
  for (const keyword of NUMBER_KEYWORDS) if (typeof field[keyword] === 'number' && Number.isFinite(field[keyword])) kept[keyword] = field[keyword];
  if (typeof field.format === 'string' && FORMATS.has(field.format)) kept.format = field.format;
  if (Array.isArray(field.enum) && field.enum.every((v) => typeof v === 'string')) kept.enum = [...field.enum];
  if (Array.isArray(field.enumNames) && field.enumNames.every((v) => typeof v === 'string')) kept.enumNames = [...field.enumNames];
  const oneOf = choices(field.oneOf);
  if (oneOf) kept.oneOf = oneOf;
  if (type === 'array') {
    const items = isPlainObject(field.items) ? field.items : {};
    const anyOf = choices(items.anyOf);
    const values = Array.isArray(items.enum) && items.enum.every((v) => typeof v === 'string') ? [...items.enum] : null;
    if (!anyOf && !values) return null;
    kept.items = anyOf ? { anyOf } : { type: 'string', enum: values };
  }
  // A default of another type than its field would only fail the person's answer.
  const fallback = field.default;
  const kind = type === 'integer' ? 'number' : type;
  if (kind === 'array' ? Array.isArray(fallback) && fallback.every((v) => typeof v === 'string') : typeof fallback === kind && (kind !== 'number' || Number.isFinite(fallback))) {
    kept.default = Array.isArray(fallback) ? [...fallback] : fallback;
  }
  return kept;
}

/** Titled choices (`[{const, title}]`) as plain data; null when `value` is not such a list. */
function choices(value: unknown): Array<{ const: string; title: string }> | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const list = value.map((c) => (isPlainObject(c) && typeof c.const === 'string' ? { const: c.const, title: typeof c.title === 'string' ? c.title : c.const } : null));
  return list.every((c) => c !== null) ? (list as Array<{ const: string; title: string }>) : null;
}

/**
 * Fills the fields an answer leaves out with their schema's `default` (SEP-1034), then checks
 * the answer against the form's schema. Fields the form does not have are refused.
 * @param schema a form schema as {@link formSchemaOf} returns it.
 */
export function checkElicitationContent(schema: Record<string, unknown>, content: unknown): CheckedContent {
  if (!isPlainObject(content)) return { ok: false, fields: [{ field: '(content)', problem: 'must be an object of the form’s fields' }] };
  const properties = (isPlainObject(schema.properties) ? schema.properties : {}) as Record<string, Record<string, unknown>>;
  const filled: Record<string, unknown> = { ...content };
  for (const [name, field] of Object.entries(properties)) {
    if (filled[name] === undefined && field.default !== undefined) filled[name] = structuredClone(field.default);
  }
  let validate: ValidateFunction;
  try {
    validate = ajv.compile({ ...schema, additionalProperties: false });
  } catch (err) {
    return { ok: false, fields: [{ field: '(form)', problem: `the server's form cannot be checked: ${err instanceof Error ? err.message : String(err)}` }] };
  }
  if (validate(filled)) return { ok: true, content: filled };
  return { ok: false, fields: describe(validate.errors ?? []) };
}

// Every error at once; no coercion: a form's answer is JSON of the right types, or it is wrong.
const ajv = new Ajv({ allErrors: true, strict: false });
// MCP's string formats, checked as a person would mean them (no dependency for four formats).
ajv.addFormat('email', /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
ajv.addFormat('uri', (value: string) => URL.canParse(value) && /^[a-z][a-z0-9+.-]*:/i.test(value));
ajv.addFormat('date', (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)));
ajv.addFormat('date-time', (value: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(value) && !Number.isNaN(Date.parse(value)));

function describe(errors: readonly ErrorObject[]): InvalidField[] {
  return errors.map((e) => {
    const field = e.instancePath.split('/').slice(1).join('.');
    if (e.keyword === 'required') return { field: String(e.params.missingProperty), problem: 'is required' };
    if (e.keyword === 'additionalProperties') return { field: String(e.params.additionalProperty), problem: 'is not a field of this form' };
    if (e.keyword === 'enum') return { field: field || '(content)', problem: `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
    return { field: field || '(content)', problem: e.message ?? 'is invalid' };
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
