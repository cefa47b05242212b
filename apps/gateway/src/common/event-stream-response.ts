import type { Response } from 'express';
import type { EventDict } from '#core/events/execution-event.js';
import { DROP_GRACE_MS } from '../chat/client-limits.js';

/** A Server-Sent Events response's headers: no cache or proxy may keep or transform it, and nginx does not buffer it. */
export const EVENT_STREAM_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
} as const;

/** Makes `res` a 200 text/event-stream, unless its headers have gone out already. */
export function startEventStream(res: Response): void {
  if (!res.headersSent) res.status(200).set(EVENT_STREAM_HEADERS);
}

/**
 * The SSE `event:` name of a run event: its event_type, except `error`, which goes out as
 * `run_error`. EventSource fires its own `error` (a failed or closed connection, with no data),
 * so a listener for a run's errors would hear both under one name, and fail on `data: undefined`.
 * The JSON in `data:` is the event as everywhere else (`event_type: "error"`).
 */
export function sseEventName(eventType: string): string {
  return eventType === 'error' ? 'run_error' : eventType;
}

/** What one run event becomes on a dialect's stream: its SSE frames, and whether the stream ends after them. */
export interface StreamStep {
  frames: string[];
  ends?: boolean;
}

export interface RunStreamOptions {
  /** Headers beyond the event stream's own. */
  headers?: Record<string, string>;
  /** Frames written before the first event. */
  opening?: string[];
  /** The stream is complete with its opening frames: nothing is followed. */
  openingOnly?: boolean;
  /** Bytes the client may fall behind before it is let go (it resumes): DATAAGENT_CLIENT_BUFFER_MAX_BYTES. */
  limit: number;
  /** Subscribes to the run's events from the dialect's cursor (ChatService.follow); the function it returns stops. */
  follow: (listener: (event: EventDict) => void, onEnded: () => void) => Promise<() => void>;
  /** The dialect's projection of one event; a promise when it must look something up. */
  step: (event: EventDict) => StreamStep | Promise<StreamStep>;
  /** Called once when the client leaves, or is let go, before the stream ended (a dialect whose runs end with their client cancels there). */
  onLeave?: () => void;
}

/**
 * Streams a run's events to `res` as server-sent events in a dialect's framing, until the
 * projection says the stream ends, the run's stream ends, the client leaves (which ends the
 * stream, never the run), or the client falls more than `limit` bytes behind (let go: it
 * resumes, not buffered without bound). Events are written in log order even while a step
 * awaits; steps that do not await are written at once. Every dialect streams through here, so
 * each lets a slow client go the same way.
 */
export async function pipeRunEvents(res: Response, options: RunStreamOptions): Promise<void> {
  let ended = false;
  let stop: (() => void) | undefined;
  const end = (left = false) => {
    if (ended) return;
    ended = true;
    stop?.();
    res.end();
    if (left) options.onLeave?.();
  };
  startEventStream(res);
  for (const [name, value] of Object.entries(options.headers ?? {})) res.setHeader(name, value);
  res.flushHeaders();
  for (const frame of options.opening ?? []) res.write(frame);
  if (options.openingOnly) return end();
  const apply = (step: StreamStep) => {
    if (ended) return;
    for (const frame of step.frames) res.write(frame);
    if (step.ends) end();
    else if (res.writableLength > options.limit) {
      end(true);
      // What was written stays for the client to take for a while; a client that never reads again does not hold the socket.
      setTimeout(() => res.destroy(), DROP_GRACE_MS).unref();
    }
  };
  const handle = (event: EventDict): void | Promise<void> => {
    if (ended) return;
    const step = options.step(event);
    return step instanceof Promise ? step.then(apply) : apply(step);
  };
  // The steps still to write while one awaits; undefined when none is pending.
  let pending: Promise<void> | undefined;
  const settle = (chain: Promise<void>) => {
    const settled: Promise<void> = chain.catch(() => end()).then(() => {
      if (pending === settled) pending = undefined;
    });
    pending = settled;
  };
  const take = (event: EventDict) => {
    if (pending) return settle(pending.then(() => handle(event)));
    const awaiting = handle(event);
    if (awaiting) settle(awaiting);
  };
  res.on('close', () => end(true));
  stop = await options.follow(take, () => void (pending ?? Promise.resolve()).then(() => end()));
  if (ended) stop();
}

/** One SSE frame: `data:` only, or with an `event:` name. */
export function sseFrame(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}
