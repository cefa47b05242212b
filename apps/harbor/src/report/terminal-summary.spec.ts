import { parseQuestionSet } from '../questions/question-set.js';
import { judge } from '../runs/question-result.js';
import { buildReport } from './harbor-report.js';
import { formatMs, renderTerminalSummary } from './terminal-summary.js';

describe('formatMs', () => {
  it('shows ms below a second, then seconds', () => {
    expect([formatMs(0.4), formatMs(412.6), formatMs(1234), formatMs(12_345)]).toEqual(['0 ms', '413 ms', '1.23 s', '12.3 s']);
  });
});

describe('renderTerminalSummary', () => {
  const set = parseQuestionSet(
    Array.from({ length: 40 }, (_, i) => ({ question: `q${i}`, expected_keywords: ['yes'], category: i < 2 ? 'a' : 'b', difficulty: 'easy' })),
    'set.json',
  );
  const options = { server: 'http://s', questions: 'set.json', concurrency: 4, mode: 'rest', out: 'o', minPassRate: 0, rampUpMs: 0, repeat: 1, timeoutMs: 1000, assistant: 'default' } as const;
  const results = set.questions.map((q, i) =>
    judge(q, { iteration: 1, started_at: new Date(0).toISOString(), offset_ms: i, total_ms: 100 + i }, i === 0 ? { error: '503 over_capacity' } : { exchange: { events: [], sessionId: 's', runId: 'r', ttftMs: 5 } }),
  );

  it('lists the failures, the first 30 of them', () => {
    const text = renderTerminalSummary(buildReport(options, set, { results, started_at: new Date(0).toISOString(), duration_ms: 2000, interrupted: false }));
    expect(text).toContain('40 asked in 2.00 s (20.0/s): 0 passed (0.0%), 0 failed, 40 errors, 0 timeouts');
    expect(text).toContain('  by category    a 0/2 · b 0/38');
    expect(text).toContain('    q001 #1 [a] error: 503 over_capacity');
    expect(text).toContain('    q002 #1 [a] error: the run did not finish (no done event)');
    expect(text).toContain('… and 10 more in report.json');
    expect(text).toContain('response time  –');
  });
});
