import type { EventDict } from '#core/events/execution-event.js';
import { answerText, failureReason, passes, runFailure, scoreAnswer } from './scoring.js';

let seq = 0;
const event = (event_type: string, fields: Record<string, unknown> = {}): EventDict =>
  ({ event_type, timestamp: '2026-01-01T00:00:00.000Z', session_id: 's', run_id: 'r', seq: ++seq, ...fields }) as EventDict;
const text = (content: string) => event('text', { content, is_final: false });

describe('answerText', () => {
  it('joins the text events', () => {
    expect(answerText([event('run_started'), text('Hello'), event('tool_call'), text(' world'), event('done', { cancelled: false })])).toBe('Hello world');
  });

  it('drops the text a lost worker had streamed past resume_after_seq', () => {
    seq = 0;
    const events = [event('run_started'), text('kept '), text('cut '), event('error', { error_code: 'worker_lost', recoverable: true, resume_after_seq: 2 }), text('redone')];
    expect(answerText(events)).toBe('kept redone');
  });
});

describe('scoreAnswer', () => {
  const question = { expected_keywords: ['Paris', 'capital'], pattern: /\bFrance\b/ };

  it('finds keywords case-insensitively and tests the pattern as written', () => {
    const score = scoreAnswer(question, 'paris is the CAPITAL of France');
    expect(score).toEqual({ keywords_matched: ['Paris', 'capital'], keywords_missing: [], pattern_matched: true });
    expect(passes(score)).toBe(true);
  });

  it('fails on a missing keyword or a pattern that does not match', () => {
    const missing = scoreAnswer(question, 'Paris, France');
    expect(missing).toEqual({ keywords_matched: ['Paris'], keywords_missing: ['capital'], pattern_matched: true });
    expect(passes(missing)).toBe(false);
    const noMatch = scoreAnswer(question, 'Paris is the capital of france');
    expect(noMatch.pattern_matched).toBe(false);
    expect(passes(noMatch)).toBe(false);
    expect(failureReason({ expected_pattern: '\\bFrance\\b' }, noMatch)).toBe('no match for \\bFrance\\b');
    expect(failureReason({ expected_pattern: null }, missing)).toBe('missing "capital"');
  });

  it('passes any answer when nothing is expected', () => {
    const score = scoreAnswer({ expected_keywords: [], pattern: null }, '');
    expect(score.pattern_matched).toBeNull();
    expect(passes(score)).toBe(true);
  });
});

describe('runFailure', () => {
  it('accepts a run that ended normally, also after a recovered error', () => {
    expect(runFailure([text('a'), event('error', { error_code: 'worker_lost', recoverable: true }), event('done', { cancelled: false })])).toBeUndefined();
  });

  it('reports a failed, cancelled or unfinished run', () => {
    expect(runFailure([event('error', { error: 'boom', error_code: 'run_failed', recoverable: false }), event('done', { cancelled: false })])).toBe('the run failed: run_failed: boom');
    expect(runFailure([event('done', { cancelled: true, reason: 'user' })])).toBe('the run was cancelled (user)');
    expect(runFailure([text('a')])).toBe('the run did not finish (no done event)');
  });
});
