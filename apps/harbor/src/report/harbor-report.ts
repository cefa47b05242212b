import type { RunOptions } from '../cli/run-options.js';
import type { QuestionSet } from '../questions/question-set.js';
import type { LoadRun } from '../runs/load-runner.js';
import type { QuestionResult } from '../runs/question-result.js';
import { summarize, type Summary } from './stats.js';

/** `report.json`: everything a run measured. The API key is never in it. */
export interface HarborReport {
  format: 'harbor-report/1';
  generated_at: string;
  question_set: { name: string; file: string; questions: number };
  config: {
    server: string;
    mode: RunOptions['mode'];
    concurrency: number;
    repeat: number | null;
    duration_s: number | null;
    ramp_up_s: number;
    timeout_s: number;
    min_pass_rate: number;
    assistant: string;
  };
  run: {
    started_at: string;
    duration_ms: number;
    interrupted: boolean;
    /** Questions finished per second of the run. */
    throughput_per_s: number;
  };
  summary: Summary;
  failures: Array<Pick<QuestionResult, 'question_id' | 'iteration' | 'category' | 'status' | 'reason'>>;
  /** In the order they finished. */
  results: QuestionResult[];
}

export function buildReport(options: RunOptions, set: QuestionSet, run: LoadRun): HarborReport {
  return {
    format: 'harbor-report/1',
    generated_at: new Date().toISOString(),
    question_set: { name: set.name, file: set.file, questions: set.questions.length },
    config: {
      server: options.server,
      mode: options.mode,
      concurrency: options.concurrency,
      repeat: options.durationMs === undefined ? options.repeat : null,
      duration_s: options.durationMs === undefined ? null : options.durationMs / 1000,
      ramp_up_s: options.rampUpMs / 1000,
      timeout_s: options.timeoutMs / 1000,
      min_pass_rate: options.minPassRate,
      assistant: options.assistant,
    },
    run: {
      started_at: run.started_at,
      duration_ms: run.duration_ms,
      interrupted: run.interrupted,
      throughput_per_s: run.duration_ms > 0 ? run.results.length / (run.duration_ms / 1000) : 0,
    },
    summary: summarize(run.results),
    failures: run.results
      .filter((r) => r.status !== 'passed')
      .map(({ question_id, iteration, category, status, reason }) => ({ question_id, iteration, category, status, reason })),
    results: run.results,
  };
}
