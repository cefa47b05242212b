import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compilePattern, parseQuestionSet } from './question-set.js';

const question = (extra: Record<string, unknown> = {}) => ({ question: 'Q?', expected_keywords: ['a'], category: 'c', difficulty: 'easy', ...extra });

describe('parseQuestionSet', () => {
  it('takes a bare array, numbering the questions and naming the set after its file', () => {
    const set = parseQuestionSet([question(), question({ id: 'mine', expected_pattern: '\\d+', difficulty: 3 })], '/sets/smoke.json');
    expect(set.name).toBe('smoke');
    expect(set.questions.map((q) => q.id)).toEqual(['q001', 'mine']);
    expect(set.questions[1]).toMatchObject({ difficulty: '3', expected_pattern: '\\d+' });
    expect(set.questions[1].pattern?.test('42')).toBe(true);
    expect(set.questions[0].pattern).toBeNull();
  });

  it('takes an object with a name', () => {
    expect(parseQuestionSet({ name: 'regression', questions: [question()] }, 'x.json').name).toBe('regression');
  });

  it('names the file, the question and the field of each problem', () => {
    const bad = [question(), { question: '', expected_keywords: 'a', category: 'c', difficulty: 'easy', extra: 1 }, question({ id: 'dup' })];
    expect(() => parseQuestionSet(bad, 'bad.json')).toThrow(/the question set bad\.json is not valid:/);
    expect(() => parseQuestionSet(bad, 'bad.json')).toThrow(/question 2: question must NOT have fewer than 1 characters/);
    expect(() => parseQuestionSet(bad, 'bad.json')).toThrow(/question 2: expected_keywords must be array/);
    expect(() => parseQuestionSet(bad, 'bad.json')).toThrow(/question 2: unknown field "extra"/);
    expect(() => parseQuestionSet([question({ category: undefined })], 'bad.json')).toThrow("question 1: must have required property 'category'");
  });

  it('refuses duplicate ids, bad patterns and empty sets', () => {
    expect(() => parseQuestionSet([question({ id: 'x' }), question({ id: 'x' })], 'f.json')).toThrow(`question 2 (x): id "x" is also question 1's`);
    expect(() => parseQuestionSet([question({ expected_pattern: '(' })], 'f.json')).toThrow('question 1 (q001): expected_pattern is not a valid regular expression');
    expect(() => parseQuestionSet([], 'f.json')).toThrow('questions must NOT have fewer than 1 items');
    expect(() => parseQuestionSet('nope', 'f.json')).toThrow('must be object');
  });

  it('accepts the shipped sample set of at least 50 questions', () => {
    const file = fileURLToPath(new URL('../../questions/sample.json', import.meta.url));
    const set = parseQuestionSet(JSON.parse(readFileSync(file, 'utf8')), file);
    expect(set.name).toBe('harbor-sample');
    expect(set.questions.length).toBeGreaterThanOrEqual(50);
  });
});

describe('compilePattern', () => {
  it('reads /source/flags, dropping the stateful g and y', () => {
    const pattern = compilePattern('/paris/gi');
    expect(pattern.flags).toBe('i');
    expect(pattern.test('PARIS') && pattern.test('Paris')).toBe(true);
  });

  it('takes anything else as the source', () => {
    expect(compilePattern('a/b').test('xa/by')).toBe(true);
    expect(compilePattern('^Paris$').test('paris')).toBe(false);
  });
});
