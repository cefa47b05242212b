import { formContent, formFields, initialValues } from './elicitation-form.js';

const booking = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name on the booking', description: 'Who the table is for', minLength: 1 },
    guests: { type: 'integer', title: 'Guests', minimum: 1, maximum: 12, default: 2 },
    seating: { type: 'string', title: 'Seating', enum: ['inside', 'terrace'], default: 'inside' },
    menu: { type: 'string', oneOf: [{ const: 'veg', title: 'Vegetarian' }, { const: 'fish', title: 'Fish' }] },
    extras: { type: 'array', title: 'Extras', items: { anyOf: [{ const: 'cake', title: 'A cake' }, { const: 'wine', title: 'Wine' }] } },
    high_chair: { type: 'boolean', title: 'High chair', default: false },
  },
  required: ['name'],
};

describe('the elicitation form', () => {
  it('shows each field of the schema with its title, description, choices, bounds and default', () => {
    const fields = formFields(booking);
    expect(fields.map((f) => [f.name, f.kind, f.label, f.required])).toEqual([
      ['name', 'string', 'Name on the booking', true],
      ['guests', 'integer', 'Guests', false],
      ['seating', 'choice', 'Seating', false],
      ['menu', 'choice', 'menu', false],
      ['extras', 'multi', 'Extras', false],
      ['high_chair', 'boolean', 'High chair', false],
    ]);
    expect(fields[0]).toMatchObject({ description: 'Who the table is for', min: 1 });
    expect(fields[1]).toMatchObject({ min: 1, max: 12, default: 2 });
    expect(fields[3].options).toEqual([{ value: 'veg', label: 'Vegetarian' }, { value: 'fish', label: 'Fish' }]);
    expect(fields[4].options).toEqual([{ value: 'cake', label: 'A cake' }, { value: 'wine', label: 'Wine' }]);
    expect(initialValues(fields)).toEqual({ name: '', guests: 2, seating: 'inside', menu: '', extras: [], high_chair: false });
  });

  it('answers with typed values, leaving empty fields out for their defaults to fill', () => {
    const fields = formFields(booking);
    expect(formContent(fields, { ...initialValues(fields), name: 'Ada', guests: '' })).toEqual({ name: 'Ada', seating: 'inside', extras: [], high_chair: false });
    expect(formContent(fields, { name: 'Ada', guests: '4', seating: 'terrace', menu: 'fish', extras: ['wine'], high_chair: true })).toEqual({ name: 'Ada', guests: 4, seating: 'terrace', menu: 'fish', extras: ['wine'], high_chair: true });
  });

  it('shows a form without fields as none', () => {
    expect(formFields(undefined)).toEqual([]);
    expect(formFields({ type: 'object' })).toEqual([]);
  });
});
