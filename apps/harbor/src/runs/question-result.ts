import type { EventDict } from '#core/events/execution-event.js';
import type { Question } from '../questions/question-set.js';
import type { Exchange } from './chat-transport.js';
import { answerText, failureReason, passes, runFailure, scoreAnswer, type ResultStatus } from './scoring.js';

/** One question asked once: what the results file records of it, and what the report shows. */
export interface QuestionResult {
  question_id: string;
  /** Which pass through the set (1-based): --repeat and --duration ask each question again. */
  iteration: number;
  category: string;
  difficulty: string;
  question: string;
  status: ResultStatus;
  /** Why it did not pass; absent when it passed. */
  reason?: string;
  started_at: string;
  /** When it was sent, in ms after the run began. */
  offset_ms: number;
  /** Sent → first non-empty `text` event; null without an answer. */
  ttft_ms: number | null;
  /** Sent → `done` (or the error or timeout). */
  total_ms: number;
  keywords_matched: string[];
  keywords_missing: string[];
  /** null when the question has no pattern, or there was no answer. */
  pattern_matched: boolean | null;
  answer: string;
  session_id: string | null;
  run_id: string | null;
  events: EventDict[];
}

/** How asking went: the run's exchange, or why there is none. */
export type Outcome = { exchange: Exchange } | { timeout: string } | { error: string };

export interface Timing {
  iteration: number;
  started_at: string;
  offset_ms: number;
  total_ms: number;
}

/** Scores an outcome into a result: error and timeout without an answer, else passed or failed. */
export function judge(question: Question, timing: Timing, outcome: Outcome): QuestionResult {
  const base = {
    question_id: question.id,
    iteration: timing.iteration,
    category: question.category,
    difficulty: question.difficulty,
    question: question.question,
    started_at: timing.started_at,
    offset_ms: timing.offset_ms,
    total_ms: timing.total_ms,
  };
  if (!('exchange' in outcome)) {
    const status: ResultStatus = 'timeout' in outcome ? 'timeout' : 'error';
    return {
      ...base,
      status,
      reason: 'timeout' in outcome ? outcome.timeout : outcome.error,
      ttft_ms: null,
      keywords_matched: [],
      keywords_missing: [...question.expected_keywords],
      pattern_matched: null,
      answer: '',
      session_id: null,
      run_id: null,
      events: [],
    };
  }
  const { exchange } = outcome;
  const answer = answerText(exchange.events);
  const score = scoreAnswer(question, answer);
  const failure = runFailure(exchange.events);
  const status: ResultStatus = failure ? 'error' : passes(score) ? 'passed' : 'failed';
  return {
    ...base,
    status,
    ...(status === 'error' ? { reason: failure } : status === 'failed' ? { reason: failureReason(question, score) } : {}),
    ttft_ms: exchange.ttftMs,
    ...score,
    answer,
    session_id: exchange.sessionId,
    run_id: exchange.runId,
    events: exchange.events,
  };
}
