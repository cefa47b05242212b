import type { EventDict } from '#core/events/execution-event.js';
import type { Question } from '../questions/question-set.js';

export type ResultStatus = 'passed' | 'failed' | 'error' | 'timeout';

export interface AnswerScore {
  keywords_matched: string[];
  keywords_missing: string[];
  /** null when the question has no `expected_pattern`. */
  pattern_matched: boolean | null;
}

/**
 * The run's answer: its `text` events joined. After a `worker_lost` error the events past its
 * `resume_after_seq` were redone by the next worker, so they are dropped, as a client does.
 */
export function answerText(events: readonly EventDict[]): string {
  let kept: EventDict[] = [];
  for (const event of events) {
    if (event.event_type === 'error' && event.error_code === 'worker_lost' && event.resume_after_seq !== undefined) {
      const after = event.resume_after_seq;
      kept = kept.filter((e) => e.seq <= after);
    }
    kept.push(event);
  }
  return kept
    .filter((e) => e.event_type === 'text')
    .map((e) => e.content)
    .join('');
}

/** Keywords are found case-insensitively anywhere in the answer; the pattern is tested as written. */
export function scoreAnswer(question: Pick<Question, 'expected_keywords' | 'pattern'>, answer: string): AnswerScore {
  const lower = answer.toLowerCase();
  const keywords_matched: string[] = [];
  const keywords_missing: string[] = [];
  for (const keyword of question.expected_keywords) (lower.includes(keyword.toLowerCase()) ? keywords_matched : keywords_missing).push(keyword);
  return { keywords_matched, keywords_missing, pattern_matched: question.pattern ? question.pattern.test(answer) : null };
}

/** Passed needs every keyword and the pattern (when there is one). */
export function passes(score: AnswerScore): boolean {
  return score.keywords_missing.length === 0 && score.pattern_matched !== false;
}

/**
 * Why a finished exchange counts as an error rather than an answer, or undefined when the run
 * ended normally: no `done`, a cancelled run, or an error the run did not recover from.
 */
export function runFailure(events: readonly EventDict[]): string | undefined {
  const done = events.find((e) => e.event_type === 'done');
  if (!done) return 'the run did not finish (no done event)';
  const fatal = events.filter((e) => e.event_type === 'error').find((e) => !e.recoverable);
  if (fatal) return `the run failed: ${fatal.error_code ? `${fatal.error_code}: ` : ''}${fatal.error}`;
  if (done.cancelled) return `the run was cancelled${done.reason ? ` (${done.reason})` : ''}`;
  return undefined;
}

/** A failed answer's reason in a line: which keywords are missing and whether the pattern missed. */
export function failureReason(question: Pick<Question, 'expected_pattern'>, score: AnswerScore): string {
  const parts: string[] = [];
  if (score.keywords_missing.length > 0) parts.push(`missing ${score.keywords_missing.map((k) => JSON.stringify(k)).join(', ')}`);
  if (score.pattern_matched === false) parts.push(`no match for ${question.expected_pattern}`);
  return parts.join('; ');
}
