import { MAX_SEQ, type EventDict } from '#core/events/execution-event.js';
import type { RunEventLog } from './run-event-log.js';
import type { SessionEventRelay } from './session-event-relay.js';

export interface FollowOptions {
  sessionId: string;
  /** Only this run's events; all of the session's runs when absent. */
  runId?: string;
  /** Replay this run's events after this seq before live ones (needs runId). */
  afterSeq?: number;
  /** Where to read events that Redis no longer holds (the MySQL archive). */
  archive?: (runId: string, afterSeq: number) => Promise<EventDict[]>;
}

/**
 * Delivers a run's events after `afterSeq`, then live ones: no gap, no duplicate.
 * Subscribes first, replays from the log, then releases what arrived meanwhile.
 * @returns a function that stops following.
 * @throws RangeError when afterSeq is not an integer in [0, MAX_SEQ]; whatever the log or the
 *   archive throws while replaying. Nothing stays subscribed when it throws.
 */
export async function followEvents(
  relay: SessionEventRelay,
  log: RunEventLog,
  options: FollowOptions,
  onEvent: (event: EventDict) => void,
): Promise<() => void> {
  const { sessionId, runId } = options;
  if (options.afterSeq !== undefined && !(Number.isInteger(options.afterSeq) && options.afterSeq >= 0 && options.afterSeq <= MAX_SEQ)) {
    throw new RangeError(`afterSeq must be an integer from 0 to ${MAX_SEQ}`);
  }
  const lastSeq = new Map<string, number>();
  let buffer: EventDict[] | null = runId && options.afterSeq !== undefined ? [] : null;

  const deliver = (event: EventDict) => {
    if (runId && event.run_id !== runId) return;
    const last = lastSeq.get(event.run_id) ?? (event.run_id === runId ? options.afterSeq ?? 0 : 0);
    if (event.seq <= last) return;
    lastSeq.set(event.run_id, event.seq);
    onEvent(event);
  };

  const stop = await relay.watch(sessionId, (event) => {
    if (buffer) buffer.push(event);
    else deliver(event);
  });

  if (buffer && runId) {
    try {
      const afterSeq = options.afterSeq ?? 0;
      let replay = await log.range(runId, afterSeq);
      if (replay.length === 0 && options.archive && (await log.lastSeq(runId)) === 0) {
        replay = await options.archive(runId, afterSeq);
      }
      for (const event of replay) deliver(event);
      const held = buffer;
      buffer = null;
      for (const event of held) deliver(event);
    } catch (err) {
      buffer = null;
      stop();
      throw err;
    }
  }
  return stop;
}
