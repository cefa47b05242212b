import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Question } from '../questions/question-set.js';
import { ExchangeError, type ChatTransport } from './chat-transport.js';
import { judge, type Outcome, type QuestionResult } from './question-result.js';

export interface LoadPlan {
  questions: Question[];
  concurrency: number;
  /** Passes through the set; ignored with `durationMs`. */
  repeat: number;
  /** Keep asking, cycling through the set, until this much time has passed. */
  durationMs?: number;
  /** Slots start evenly spread over this time. */
  rampUpMs: number;
  /** Per question. */
  timeoutMs: number;
}

export interface LoadRun {
  results: QuestionResult[];
  started_at: string;
  duration_ms: number;
  /** Stopped early (Ctrl-C): questions not yet asked were left out. */
  interrupted: boolean;
}

export interface LoadHooks {
  /** Called as each question finishes. */
  onResult?(result: QuestionResult): void;
  /** Aborting it hands out no more questions; those in flight finish. */
  stop?: AbortSignal;
}

/** How many questions a plan asks; undefined when it runs for a duration. */
export function plannedCount(plan: Pick<LoadPlan, 'questions' | 'repeat' | 'durationMs'>): number | undefined {
  return plan.durationMs === undefined ? plan.questions.length * plan.repeat : undefined;
}

/**
 * Asks the plan's questions from `concurrency` slots at once, each slot with a transport of its
 * own, each taking the next question as soon as its last one is done.
 */
export async function runLoad(plan: LoadPlan, openTransport: () => ChatTransport, hooks: LoadHooks = {}): Promise<LoadRun> {
  const startedAt = new Date();
  const t0 = performance.now();
  const total = plannedCount(plan);
  const deadline = plan.durationMs === undefined ? undefined : t0 + plan.durationMs;
  const results: QuestionResult[] = [];
  let handedOut = 0;

  const take = (): { question: Question; iteration: number } | undefined => {
    if (hooks.stop?.aborted) return undefined;
    if (deadline !== undefined ? performance.now() >= deadline : handedOut >= total!) return undefined;
    const index = handedOut++;
    return { question: plan.questions[index % plan.questions.length], iteration: Math.floor(index / plan.questions.length) + 1 };
  };

  const slot = async (index: number) => {
    const delay = (index * plan.rampUpMs) / plan.concurrency;
    if (delay > 0) await sleep(delay, undefined, hooks.stop ? { signal: hooks.stop } : {}).catch(() => undefined);
    const transport = openTransport();
    try {
      for (let item = take(); item; item = take()) {
        const result = await ask(transport, item.question, item.iteration, t0, plan.timeoutMs);
        results.push(result);
        hooks.onResult?.(result);
      }
    } finally {
      await transport.close();
    }
  };

  const slots = Math.min(plan.concurrency, total ?? plan.concurrency);
  await Promise.all(Array.from({ length: slots }, (_, index) => slot(index)));
  return { results, started_at: startedAt.toISOString(), duration_ms: performance.now() - t0, interrupted: hooks.stop?.aborted ?? false };
}

async function ask(transport: ChatTransport, question: Question, iteration: number, t0: number, timeoutMs: number): Promise<QuestionResult> {
  const started_at = new Date().toISOString();
  const start = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  let outcome: Outcome;
  try {
    outcome = { exchange: await transport.ask(question.question, signal) };
  } catch (err) {
    if (signal.aborted) outcome = { timeout: `no answer within ${timeoutMs / 1000} s` };
    // POST /chat gave up waiting (504); the run itself goes on.
    else if (err instanceof ExchangeError && err.code === 'run_timeout') outcome = { timeout: err.message };
    else outcome = { error: err instanceof Error ? err.message : String(err) };
  }
  return judge(question, { iteration, started_at, offset_ms: start - t0, total_ms: performance.now() - start }, outcome);
}
