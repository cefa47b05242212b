import type { EventDict } from '#core/events/execution-event.js';
import { parseQuestionSet } from '../questions/question-set.js';
import { ExchangeError, type ChatTransport, type Exchange } from './chat-transport.js';
import { plannedCount, runLoad, type LoadPlan } from './load-runner.js';

const questions = parseQuestionSet(
  ['alpha', 'beta', 'gamma', 'delta', 'epsilon'].map((word) => ({ question: word, expected_keywords: [word], category: word.length > 4 ? 'long' : 'short', difficulty: 'easy' })),
  'words.json',
).questions;

const answer = (message: string, text: string): Exchange => {
  const envelope = { timestamp: new Date().toISOString(), session_id: `s-${message}`, run_id: `r-${message}` };
  const events = [
    { ...envelope, seq: 1, event_type: 'text', content: text },
    { ...envelope, seq: 2, event_type: 'done', cancelled: false },
  ] as EventDict[];
  return { events, sessionId: envelope.session_id, runId: envelope.run_id, ttftMs: 1 };
};

/** An in-process server: answers each question with `reply`, one event-loop turn later, counting how many are in flight. */
class FakeTransport implements ChatTransport {
  static inFlight = 0;
  static maxInFlight = 0;
  static opened = 0;
  static closed = 0;

  constructor(private readonly reply: (message: string, signal: AbortSignal) => Promise<Exchange>) {
    FakeTransport.opened++;
  }

  async ask(message: string, signal: AbortSignal): Promise<Exchange> {
    FakeTransport.maxInFlight = Math.max(FakeTransport.maxInFlight, ++FakeTransport.inFlight);
    try {
      await new Promise((resolve) => setImmediate(resolve));
      return await this.reply(message, signal);
    } finally {
      FakeTransport.inFlight--;
    }
  }

  async close(): Promise<void> {
    FakeTransport.closed++;
  }
}

const plan = (extra: Partial<LoadPlan> = {}): LoadPlan => ({ questions, concurrency: 3, repeat: 1, rampUpMs: 0, timeoutMs: 5_000, ...extra });

beforeEach(() => {
  FakeTransport.inFlight = FakeTransport.maxInFlight = FakeTransport.opened = FakeTransport.closed = 0;
});

describe('runLoad', () => {
  it('asks every question of every pass at the concurrency, one transport per slot', async () => {
    const run = await runLoad(plan({ repeat: 2 }), () => new FakeTransport(async (m) => answer(m, m)));
    expect(run.results).toHaveLength(10);
    expect(run.results.every((r) => r.status === 'passed')).toBe(true);
    expect(run.results.filter((r) => r.iteration === 2).map((r) => r.question_id).sort()).toEqual(questions.map((q) => q.id));
    expect(FakeTransport.maxInFlight).toBe(3);
    expect([FakeTransport.opened, FakeTransport.closed]).toEqual([3, 3]);
    expect(plannedCount(plan({ repeat: 2 }))).toBe(10);
  });

  it('opens no more slots than there are questions', async () => {
    await runLoad(plan({ concurrency: 50 }), () => new FakeTransport(async (m) => answer(m, m)));
    expect(FakeTransport.opened).toBe(5);
  });

  it('scores wrong answers as failed, refusals as errors and slow ones as timeouts', async () => {
    const reply = async (message: string, signal: AbortSignal) => {
      if (message === 'beta') throw new ExchangeError('503 over_capacity: full', 'over_capacity');
      if (message === 'gamma') throw new ExchangeError('504 run_timeout', 'run_timeout');
      if (message === 'delta') return new Promise<Exchange>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
      return answer(message, message === 'alpha' ? 'something else' : message);
    };
    const run = await runLoad(plan({ timeoutMs: 200 }), () => new FakeTransport(reply));
    const status = Object.fromEntries(run.results.map((r) => [r.question, [r.status, r.reason]]));
    expect(status).toEqual({
      alpha: ['failed', 'missing "alpha"'],
      beta: ['error', '503 over_capacity: full'],
      gamma: ['timeout', '504 run_timeout'],
      delta: ['timeout', 'no answer within 0.2 s'],
      epsilon: ['passed', undefined],
    });
  });

  it('hands out no more questions once stopped, and says it was interrupted', async () => {
    const stop = new AbortController();
    const run = await runLoad(plan({ concurrency: 1 }), () => new FakeTransport(async (m) => answer(m, m)), {
      stop: stop.signal,
      onResult: (r) => r.question === 'beta' && stop.abort(),
    });
    expect(run.results.map((r) => r.question)).toEqual(['alpha', 'beta']);
    expect(run.interrupted).toBe(true);
  });

  it('cycles through the set until the duration is over, then hands out no more', async () => {
    let asked = 0;
    // The 12th question is still being answered when the time is up.
    const reply = async (message: string) => {
      if (++asked === 12) await new Promise((resolve) => setTimeout(resolve, 1_100));
      return answer(message, message);
    };
    const run = await runLoad(plan({ durationMs: 1_000, concurrency: 1 }), () => new FakeTransport(reply));
    expect(plannedCount(plan({ durationMs: 1_000 }))).toBeUndefined();
    expect(run.results).toHaveLength(12);
    expect(run.results.map((r) => `${r.question}#${r.iteration}`)).toEqual(Array.from({ length: 12 }, (_, i) => `${questions[i % 5].question}#${Math.floor(i / 5) + 1}`));
  });

  it('starts the slots evenly over the ramp-up', async () => {
    const firstAsk: number[] = [];
    const begin = performance.now();
    await runLoad(plan({ concurrency: 3, rampUpMs: 300, repeat: 3 }), () => {
      const slot = firstAsk.length;
      firstAsk.push(NaN);
      return new FakeTransport(async (m) => {
        if (Number.isNaN(firstAsk[slot])) firstAsk[slot] = performance.now() - begin;
        // 50 ms an answer: by 200 ms the first slots have taken at most 6 of the 15 questions.
        await new Promise((resolve) => setTimeout(resolve, 50));
        return answer(m, m);
      });
    });
    // Timers never fire early: slot k asks nothing before k × 100 ms.
    expect(firstAsk[1]).toBeGreaterThanOrEqual(99);
    expect(firstAsk[2]).toBeGreaterThanOrEqual(199);
  });
});
