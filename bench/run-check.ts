import type { EventDict } from '#core/events/execution-event.js';

/** Why a run's events were not well formed, as counted in a round's `gaps`. */
export type RunProblem = 'gap' | 'duplicate' | 'second done' | 'event after done';

/**
 * Checks one run's events as a client receives them: seq strictly 1, 2, … n with no gap or
 * duplicate, at most one done, nothing after it. (No done at all is a failed run: the caller's
 * timeout counts it.) Events with seq 0 are the gateway's own errors, outside the run's log,
 * and are left out of the seq check.
 */
export class RunCheck {
  /** Every event received for the run, of every type. */
  events = 0;
  private nextSeq = 1;
  private dones = 0;
  private first?: RunProblem;

  record(event: EventDict): void {
    this.events++;
    if (this.dones > 0) this.first ??= event.event_type === 'done' ? 'second done' : 'event after done';
    if (event.event_type === 'done') this.dones++;
    if (event.seq === 0) return;
    if (event.seq !== this.nextSeq) this.first ??= event.seq < this.nextSeq ? 'duplicate' : 'gap';
    this.nextSeq = Math.max(this.nextSeq, event.seq + 1);
  }

  /** The first problem seen, or undefined when the events so far are well formed. */
  get problem(): RunProblem | undefined {
    return this.first;
  }
}
