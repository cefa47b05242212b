import { performance } from 'node:perf_hooks';
import type { EventDict } from '#core/events/execution-event.js';
import { ExchangeError, isFirstToken, type Exchange } from './chat-transport.js';

/** The gateway's acknowledgement of a socket message (Socket.IO ack, or the WebSocket's `ack`). */
export type MessageAck = { ok: true; session_id?: string; run_id?: string } | { ok: false; error_code: string };

/**
 * One question's run on a socket. The socket may deliver the run's first events before the
 * acknowledgement that names the run, and events of other runs (one cancelled after a timeout),
 * so everything is kept with its arrival time and sorted out once the run is known.
 */
export class RunEvents {
  runId?: string;
  sessionId?: string;
  private readonly seen: Array<{ event: EventDict; at: number }> = [];
  private readonly finished = new Set<string>();

  /** @param start `performance.now()` when the question was sent. */
  constructor(private readonly start: number) {}

  add(event: EventDict): void {
    this.seen.push({ event, at: performance.now() });
    if (event.event_type === 'done') this.finished.add(event.run_id);
  }

  /** Takes the acknowledgement; returns the refusal as an error when the message was refused. */
  acknowledge(ack: MessageAck): ExchangeError | undefined {
    if (!ack.ok) {
      const errors = this.seen.map((e) => e.event).filter((e) => e.event_type === 'error');
      const reason = errors.findLast((e) => e.error_code === ack.error_code)?.error;
      return new ExchangeError(`refused: ${ack.error_code}${reason !== undefined ? `: ${reason}` : ''}`, ack.error_code);
    }
    if (!ack.run_id) return new ExchangeError('the acknowledgement names no run');
    this.runId = ack.run_id;
    this.sessionId = ack.session_id;
    return undefined;
  }

  /** The run's exchange once its `done` has arrived; undefined before. */
  exchange(): Exchange | undefined {
    const runId = this.runId;
    if (!runId || !this.finished.has(runId)) return undefined;
    const mine = this.seen.filter((e) => e.event.run_id === runId);
    const first = mine.find((e) => isFirstToken(e.event));
    return {
      events: mine.map((e) => e.event),
      sessionId: this.sessionId ?? mine[0].event.session_id,
      runId,
      ttftMs: first ? first.at - this.start : null,
    };
  }
}
