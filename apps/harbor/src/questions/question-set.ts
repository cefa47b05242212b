import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { HarborUsageError } from '../cli/harbor-errors.js';

/** One question of a set, checked; `pattern` is `expected_pattern` compiled. */
export interface Question {
  id: string;
  question: string;
  expected_keywords: string[];
  expected_pattern: string | null;
  pattern: RegExp | null;
  category: string;
  difficulty: string;
}

export interface QuestionSet {
  /** The set's `name`, or the file's name without `.json`: names the LangSmith dataset. */
  name: string;
  description?: string;
  file: string;
  questions: Question[];
}

/** The fields of one question in a question set; `id` is optional (q001, q002, … by position). */
const QUESTION_SCHEMA = {
  type: 'object',
  required: ['question', 'expected_keywords', 'category', 'difficulty'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 200 },
    question: { type: 'string', minLength: 1 },
    expected_keywords: { type: 'array', items: { type: 'string', minLength: 1 } },
    expected_pattern: { type: ['string', 'null'], minLength: 1 },
    category: { type: 'string', minLength: 1, maxLength: 200 },
    difficulty: { type: ['string', 'integer'], minLength: 1, maxLength: 50 },
  },
} as const;

const SET_SCHEMA = {
  type: 'object',
  required: ['questions'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    description: { type: 'string' },
    questions: { type: 'array', minItems: 1, items: QUESTION_SCHEMA },
  },
} as const;

const validateSet = new Ajv({ allErrors: true, allowUnionTypes: true }).compile(SET_SCHEMA);

interface RawQuestion {
  id?: string;
  question: string;
  expected_keywords: string[];
  expected_pattern?: string | null;
  category: string;
  difficulty: string | number;
}

/**
 * Reads a question set: a JSON array of questions, or `{name?, description?, questions: [...]}`.
 *
 * @throws HarborUsageError naming the file and every problem in it (position, question id, field).
 */
export async function loadQuestionSet(file: string): Promise<QuestionSet> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new HarborUsageError(`cannot read the question set ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new HarborUsageError(`the question set ${file} is not valid JSON: ${(err as Error).message}`);
  }
  return parseQuestionSet(json, file);
}

/**
 * Checks a parsed question set (see {@link loadQuestionSet}).
 *
 * @throws HarborUsageError naming every problem.
 */
export function parseQuestionSet(json: unknown, file: string): QuestionSet {
  const set = Array.isArray(json) ? { questions: json } : json;
  if (!validateSet(set)) {
    const problems = (validateSet.errors ?? []).map((error) => explain(error, set));
    throw new HarborUsageError(`the question set ${file} is not valid:\n  - ${[...new Set(problems)].join('\n  - ')}`);
  }
  const raw = set as { name?: string; description?: string; questions: RawQuestion[] };
  const width = Math.max(3, String(raw.questions.length).length);
  const problems: string[] = [];
  const seen = new Map<string, number>();
  const questions = raw.questions.map((q, index): Question => {
    const id = q.id ?? `q${String(index + 1).padStart(width, '0')}`;
    const where = `question ${index + 1} (${id})`;
    const first = seen.get(id);
    if (first !== undefined) problems.push(`${where}: id "${id}" is also question ${first + 1}'s`);
    seen.set(id, index);
    let pattern: RegExp | null = null;
    if (q.expected_pattern) {
      try {
        pattern = compilePattern(q.expected_pattern);
      } catch (err) {
        problems.push(`${where}: expected_pattern is not a valid regular expression: ${(err as Error).message}`);
      }
    }
    return {
      id,
      question: q.question,
      expected_keywords: q.expected_keywords,
      expected_pattern: q.expected_pattern ?? null,
      pattern,
      category: q.category,
      difficulty: String(q.difficulty),
    };
  });
  if (problems.length > 0) throw new HarborUsageError(`the question set ${file} is not valid:\n  - ${problems.join('\n  - ')}`);
  return {
    name: raw.name ?? basename(file, extname(file)),
    ...(raw.description !== undefined ? { description: raw.description } : {}),
    file,
    questions,
  };
}

/**
 * `expected_pattern` is a JavaScript regular expression: its source (`\d+ items`), or
 * `/source/flags` for flags (`/paris/i`). `g` and `y` are dropped: they make `test` stateful.
 */
export function compilePattern(pattern: string): RegExp {
  const literal = /^\/(.+)\/([a-z]*)$/s.exec(pattern);
  if (!literal) return new RegExp(pattern);
  return new RegExp(literal[1], literal[2].replace(/[gy]/g, ''));
}

/** "question 4 (q004): expected_keywords must be array", from an ajv error. */
function explain(error: ErrorObject, set: unknown): string {
  const [, , index, ...path] = error.instancePath.split('/');
  const field = path.join('/');
  const detail = error.keyword === 'additionalProperties' ? `unknown field "${(error.params as { additionalProperty: string }).additionalProperty}"` : error.message;
  if (index === undefined) return `${error.instancePath ? error.instancePath.slice(1) + ' ' : ''}${detail}`;
  const questions = (set as { questions: Array<{ id?: unknown }> }).questions;
  const id = typeof questions[Number(index)]?.id === 'string' ? ` (${questions[Number(index)].id as string})` : '';
  return `question ${Number(index) + 1}${id}: ${field ? `${field} ` : ''}${detail}`;
}
