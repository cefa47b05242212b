import { MAX_SEQ, type EventDict } from '#core/events/execution-event.js';
import type { RunEventLog } from './run-event-log.js';
import type { RunEventRelay } from './run-event-relay.js';

export interface FollowOptions {
  runId: string;
  /** Replay the run's events after this seq before live ones; absent, live ones only. */
  afterSeq?: number;
  /** Where to read events that Redis no longer holds (the MySQL archive). */
  archive?: (runId: string, afterSeq: number) => Promise<EventDict[]>;
  /**
   * Paces the replay: awaited after each page of replayed events, it resolves once the client
   * has room for more and rejects when the client is gone or stalled (that ends the follow).
   */
  ready?: () => Promise<void>;
  /**
   * Called when the run had already ended at or before `afterSeq`: no event will come. (When
   * the done itself is delivered, that is the end.)
   */
  onEnded?: () => void;
}

/** Replayed events read from Redis and handed over per step, between two `ready` waits. */
export const REPLAY_PAGE = 200;

/**
 * `live` is false for events replayed from the log, true for those relayed as they happen.
 * `raw` is the event's JSON text as published, when it came from Redis (absent for events read
 * from the archive): a relay forwards it as is instead of encoding the event again.
 */
export type FollowListener = (event: EventDict, live: boolean, raw?: string) => void;

interface Received {
  event: EventDict;
  raw?: string;
}

function parsed(raw: string): Received {
  return { event: JSON.parse(raw) as EventDict, raw };
}

/**
 * Delivers a run's events after `afterSeq`, then live ones: no gap, no duplicate.
 * Subscribes first, replays from the log page by page (paced by `ready`), then releases what
 * arrived meanwhile.
 * @returns a function that stops following.
 * @throws RangeError when afterSeq is not an integer in [0, MAX_SEQ]; whatever the log or the
 *   archive throws while replaying. Nothing stays subscribed when it throws.
 */
export async function followEvents(
  relay: RunEventRelay,
  log: RunEventLog,
  options: FollowOptions,
  onEvent: FollowListener,
): Promise<() => void> {
  const { runId } = options;
  if (options.afterSeq !== undefined && !(Number.isInteger(options.afterSeq) && options.afterSeq >= 0 && options.afterSeq <= MAX_SEQ)) {
    throw new RangeError(`afterSeq must be an integer from 0 to ${MAX_SEQ}`);
  }
  let last = options.afterSeq ?? 0;
  /** The run's done has been delivered. */
  let ended = false;
  let buffer: Received[] | null = options.afterSeq !== undefined ? [] : null;

  const deliver = ({ event, raw }: Received, live: boolean) => {
    if (event.seq <= last) return;
    last = event.seq;
    if (event.event_type === 'done') ended = true;
    onEvent(event, live, raw);
  };

  // Live events that arrive during the replay wait here, but never more than a page of them:
  // past that they are dropped and read again from the log, which holds them too.
  let overflowed = false;
  const stop = await relay.watch(runId, (event, raw) => {
    if (!buffer) return deliver({ event, raw }, true);
    if (buffer.length < REPLAY_PAGE) buffer.push({ event, raw });
    else {
      buffer.length = 0;
      overflowed = true;
    }
  });

  if (buffer) {
    try {
      let after = options.afterSeq ?? 0;
      let archived: EventDict[] | null = null;
      const fromArchive = (events: EventDict[]): Received[] => events.map((event) => ({ event }));
      for (;;) {
        overflowed = false;
        let page = archived ? fromArchive(archived.splice(0, REPLAY_PAGE)) : (await log.rangeRaw(runId, after, REPLAY_PAGE)).map(parsed);
        if (page.length === 0 && !archived && after === (options.afterSeq ?? 0) && options.archive && (await log.lastSeq(runId)) === 0) {
          archived = await options.archive(runId, after);
          page = fromArchive(archived.splice(0, REPLAY_PAGE));
        }
        for (const received of page) deliver(received, false);
        if (page.length > 0) after = page.at(-1)!.event.seq;
        // The log is exhausted as of this read; unless live events were dropped meanwhile, the
        // held ones cover everything since.
        if (page.length < REPLAY_PAGE && !(archived?.length) && !overflowed) break;
        if (page.length === REPLAY_PAGE) await options.ready?.();
      }
      const held = buffer;
      buffer = null;
      for (const received of held) deliver(received, true);
      // A finished run whose done lies at or before the position asked for has nothing more to send.
      if (!ended && options.onEnded && (archived !== null || (await log.isSealed(runId)))) {
        for (const received of archived ? [] : (await log.rangeRaw(runId, after)).map(parsed)) deliver(received, true);
        if (!ended) options.onEnded();
      }
    } catch (err) {
      buffer = null;
      stop();
      throw err;
    }
  }
  return stop;
}
