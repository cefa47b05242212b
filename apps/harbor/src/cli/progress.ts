import { performance } from 'node:perf_hooks';
import { percentile } from '../report/stats.js';
import type { QuestionResult } from '../runs/question-result.js';
import { formatMs } from '../report/terminal-summary.js';

/** Redraws on a terminal at most this often. */
const TTY_REDRAW_MS = 100;
/** Prints a line this often when stderr is a file or a pipe. */
const LINE_INTERVAL_MS = 2_000;

/**
 * Live progress on stderr: done / total, pass rate and p50 so far. One line redrawn in place on a
 * terminal; otherwise a line every few seconds, so logs stay readable.
 */
export class Progress {
  private done = 0;
  private passed = 0;
  private readonly answered: number[] = [];
  private readonly start = performance.now();
  private lastDraw = 0;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly out: NodeJS.WritableStream & { isTTY?: boolean },
    /** Questions planned; undefined for a --duration run. */
    private readonly total: number | undefined,
  ) {
    if (!out.isTTY) this.timer = setInterval(() => this.out.write(`${this.line()}\n`), LINE_INTERVAL_MS).unref();
  }

  record(result: QuestionResult): void {
    this.done++;
    if (result.status === 'passed') this.passed++;
    if (result.status === 'passed' || result.status === 'failed') this.answered.push(result.total_ms);
    const now = performance.now();
    if (this.out.isTTY && (now - this.lastDraw >= TTY_REDRAW_MS || this.done === this.total)) {
      this.lastDraw = now;
      this.out.write(`\r\x1b[2K${this.line()}`);
    }
  }

  /** The last line, then stops; the summary follows on its own line. */
  finish(): void {
    clearInterval(this.timer);
    this.out.write(this.out.isTTY ? `\r\x1b[2K${this.line()}\n` : `${this.line()}\n`);
  }

  line(): string {
    const sorted = Float64Array.from(this.answered).sort();
    const p50 = sorted.length > 0 ? formatMs(percentile(sorted, 50)) : '–';
    const rate = this.done > 0 ? `${((100 * this.passed) / this.done).toFixed(1)}%` : '–';
    const elapsed = `${((performance.now() - this.start) / 1000).toFixed(1)} s`;
    return `harbor: ${this.done}${this.total !== undefined ? `/${this.total}` : ''} done · ${rate} passed · p50 ${p50} · ${elapsed}`;
  }
}
