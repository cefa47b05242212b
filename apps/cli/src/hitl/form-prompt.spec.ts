import { promptFields, promptLine, readAnswer } from './form-prompt.js';

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name on the booking' },
    guests: { type: 'integer', title: 'Guests', default: 2 },
    seating: { type: 'string', title: 'Seating', enum: ['inside', 'terrace'], default: 'inside' },
    extras: { type: 'array', items: { anyOf: [{ const: 'cake', title: 'A cake' }, { const: 'wine', title: 'Wine' }] } },
    high_chair: { type: 'boolean', title: 'High chair' },
  },
  required: ['name'],
};

describe('a form asked at the terminal', () => {
  const [name, guests, seating, extras, chair] = promptFields(schema);

  it('asks each field with what it takes and what Enter gives', () => {
    expect([name, guests, seating, extras, chair].map((f) => f!.kind)).toEqual(['string', 'integer', 'choice', 'multi', 'boolean']);
    expect(promptLine(name!)).toBe('Name on the booking (string; required)');
    expect(promptLine(guests!)).toBe('Guests (integer; Enter: 2)');
    expect(promptLine(seating!)).toBe('Seating (1) inside  2) terrace; Enter: inside)');
    expect(promptLine(chair!)).toBe('High chair (y/n; Enter: skip)');
  });

  it('reads typed lines as the field’s type, and an empty line as the default’s turn', () => {
    expect(readAnswer(name!, 'Ada Lovelace')).toEqual({ ok: true, value: 'Ada Lovelace' });
    expect(readAnswer(name!, '')).toEqual({ ok: false, problem: 'Name on the booking is required' });
    expect(readAnswer(guests!, '')).toEqual({ ok: true });
    expect(readAnswer(guests!, '4')).toEqual({ ok: true, value: 4 });
    expect(readAnswer(guests!, '2.5')).toMatchObject({ ok: false });
    expect(readAnswer(seating!, '2')).toEqual({ ok: true, value: 'terrace' });
    expect(readAnswer(seating!, 'inside')).toEqual({ ok: true, value: 'inside' });
    expect(readAnswer(seating!, 'roof')).toMatchObject({ ok: false });
    expect(readAnswer(extras!, '1, wine')).toEqual({ ok: true, value: ['cake', 'wine'] });
    expect(readAnswer(chair!, 'yes')).toEqual({ ok: true, value: true });
    expect(readAnswer(chair!, 'maybe')).toEqual({ ok: false, problem: 'answer y or n' });
  });
});
