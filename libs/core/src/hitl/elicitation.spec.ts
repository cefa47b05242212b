import { checkElicitationContent, formSchemaOf } from './elicitation.js';

const booking = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name', minLength: 1 },
    email: { type: 'string', format: 'email' },
    day: { type: 'string', format: 'date' },
    guests: { type: 'integer', minimum: 1, maximum: 12, default: 2 },
    seating: { type: 'string', enum: ['inside', 'terrace'], default: 'inside' },
    menu: { type: 'string', oneOf: [{ const: 'veg', title: 'Vegetarian' }, { const: 'fish', title: 'Fish' }] },
    extras: { type: 'array', items: { type: 'string', enum: ['cake', 'wine'] }, default: ['cake'] },
    high_chair: { type: 'boolean', default: false },
  },
  required: ['name'],
};

const form = () => {
  const shown = formSchemaOf(booking);
  if (!shown.ok) throw new Error(shown.reason);
  return shown.schema;
};

describe('formSchemaOf', () => {
  it('keeps a flat form of MCP field types with titles, choices and defaults', () => {
    expect(form()).toEqual(booking);
  });

  it('drops keywords outside MCP’s field schemas, so a server’s pattern or reference is never compiled', () => {
    const shown = formSchemaOf({
      type: 'object',
      properties: { code: { type: 'string', pattern: '(a+)+$', $ref: '#/x', format: 'regex', minLength: 'three', default: 7 } },
      required: ['code', 'missing'],
      $defs: { x: {} },
    });
    expect(shown).toEqual({ ok: true, schema: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] } });
  });

  it('refuses nesting and fields of no form type, saying which', () => {
    expect(formSchemaOf({ type: 'object', properties: { address: { type: 'object', properties: {} } } })).toEqual({ ok: false, reason: expect.stringContaining('field address') });
    expect(formSchemaOf({ type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } } })).toEqual({ ok: false, reason: expect.stringContaining('field tags') });
    expect(formSchemaOf({ type: 'array' })).toEqual({ ok: false, reason: expect.stringContaining('object schema') });
    expect(formSchemaOf(null)).toMatchObject({ ok: false });
  });
});

describe('checkElicitationContent', () => {
  it('fills the fields left out with their defaults (SEP-1034), and keeps what was given', () => {
    expect(checkElicitationContent(form(), { name: 'Ada', guests: 4 })).toEqual({
      ok: true,
      content: { name: 'Ada', guests: 4, seating: 'inside', extras: ['cake'], high_chair: false },
    });
  });

  it('checks the answer after filling: a required field without default must be given', () => {
    expect(checkElicitationContent(form(), {})).toEqual({ ok: false, fields: [{ field: 'name', problem: 'is required' }] });
  });

  it('names every field that does not fit: types, bounds, choices, formats, and fields the form lacks', () => {
    const checked = checkElicitationContent(form(), { name: '', email: 'not-an-address', day: '2026-13-45', guests: 2.5, seating: 'roof', menu: 'meat', extras: ['cake', 'dog'], high_chair: 'yes', pets: 1 });
    expect(checked.ok).toBe(false);
    const fields = checked.ok ? [] : checked.fields.map((f) => f.field);
    expect(new Set(fields)).toEqual(new Set(['name', 'email', 'day', 'guests', 'seating', 'menu', 'extras.1', 'high_chair', 'pets']));
    expect(checked.ok ? [] : checked.fields.find((f) => f.field === 'seating')?.problem).toBe('must be one of "inside", "terrace"');
    expect(checked.ok ? [] : checked.fields.find((f) => f.field === 'pets')?.problem).toBe('is not a field of this form');
  });

  it('takes the formats as people write them', () => {
    const schema = formSchemaOf({ type: 'object', properties: { at: { type: 'string', format: 'date-time' }, site: { type: 'string', format: 'uri' } } });
    if (!schema.ok) throw new Error(schema.reason);
    expect(checkElicitationContent(schema.schema, { at: '2026-05-01T18:30:00Z', site: 'https://example.com/a' }).ok).toBe(true);
    expect(checkElicitationContent(schema.schema, { at: 'tomorrow', site: 'example' })).toMatchObject({ ok: false, fields: [{ field: 'at' }, { field: 'site' }] });
  });

  it('refuses content that is not an object of fields', () => {
    expect(checkElicitationContent(form(), ['Ada'])).toEqual({ ok: false, fields: [{ field: '(content)', problem: expect.any(String) }] });
    expect(checkElicitationContent(form(), 'Ada')).toMatchObject({ ok: false });
  });

  it('leaves the given content as it was', () => {
    const given = { name: 'Ada' };
    checkElicitationContent(form(), given);
    expect(given).toEqual({ name: 'Ada' });
  });
});
