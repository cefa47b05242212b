import type { Response } from 'express';
import type { EventDict } from '#core/events/execution-event.js';
import { ClientStalledError, DROP_GRACE_MS, waitForRoom } from './client-limits.js';

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

/** What a dialect's stream is paced and told by while it follows a run (RunsService.follow's options). */
export interface FollowPacing {
  /** Awaited before each replayed event: a replay waits for the client instead of piling up. */
  ready?: () => Promise<void>;
  /** The run had ended at the cursor: nothing is left to follow. */
  onEnded: () => void;
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
  /** Subscribes to the run's events from the dialect's cursor (RunsService.follow); the function it returns stops. */
  follow: (listener: (event: EventDict, live: boolean, raw?: string) => void, pacing: FollowPacing) => Promise<() => void>;
  /** The dialect's projection of one event (`raw`: its JSON as the log holds it, when known); a promise when it must look something up. */
  step: (event: EventDict, raw?: string) => StreamStep | Promise<StreamStep>;
  /** Called once when the client leaves, or is let go, before the stream ended (a dialect whose runs end with their client cancels there). */
  onLeave?: () => void;
  /**
   * A replay the client asked for (Last-Event-ID) waits for the client: only live events can
   * put it more than `limit` behind. Without it, every event counts the same.
   */
  pacedReplay?: boolean;
  /** Frames a slow client gets before it is let go (the native dialect's `slow_consumer` error, which says where to resume). */
  slowFrames?: () => string[];
  /** The headers wait for the first frame, so a run that had ended before anything was written answers 204 (an EventSource then stops). */
  noContentWhenEnded?: boolean;
  /** Frames written when following fails once the headers have gone out; before that the error is thrown to the caller. */
  failedFrames?: () => string[];
  /** Told when the stream opens (with the function that ends it, as a shutdown does) and when it has ended. */
  onOpen?: (end: () => void) => void;
  onClose?: () => void;
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
  const open = () => {
    if (res.headersSent) return;
    startEventStream(res);
    for (const [name, value] of Object.entries(options.headers ?? {})) res.setHeader(name, value);
  };
  const end = (left = false) => {
    if (ended) return;
    ended = true;
    stop?.();
    res.end();
    options.onClose?.();
    if (left) options.onLeave?.();
  };
  const write = (frames: readonly string[]) => {
    if (frames.length > 0) open();
    for (const frame of frames) res.write(frame);
  };
  const letGo = () => {
    write(options.slowFrames?.() ?? []);
    // The connection is not kept alive for another request: it closes once the client has taken
    // what was written, and a client that never reads again does not hold the socket.
    const socket = res.socket;
    res.once('finish', () => socket?.end());
    end(true);
    setTimeout(() => res.destroy(), DROP_GRACE_MS).unref();
  };
  if (!options.noContentWhenEnded) {
    open();
    res.flushHeaders();
  }
  write(options.opening ?? []);
  options.onOpen?.(() => end());
  if (options.openingOnly) return end();
  const apply = (step: StreamStep, live: boolean) => {
    if (ended) return;
    write(step.frames);
    if (step.ends) end();
    else if ((live || !options.pacedReplay) && res.writableLength > options.limit) letGo();
  };
  const handle = (event: EventDict, live: boolean, raw?: string): void | Promise<void> => {
    if (ended) return;
    const step = options.step(event, raw);
    return step instanceof Promise ? step.then((s) => apply(s, live)) : apply(step, live);
  };
  // The steps still to write while one awaits; undefined when none is pending.
  let pending: Promise<void> | undefined;
  const settle = (chain: Promise<void>) => {
    const settled: Promise<void> = chain.catch(() => end()).then(() => {
      if (pending === settled) pending = undefined;
    });
    pending = settled;
  };
  const take = (event: EventDict, live: boolean, raw?: string) => {
    if (pending) return settle(pending.then(() => handle(event, live, raw)));
    const awaiting = handle(event, live, raw);
    if (awaiting) settle(awaiting);
  };
  const ready = options.pacedReplay
    ? () =>
        waitForRoom(() => res.writableLength, options.limit, () => ended).catch((err: unknown) => {
          if (err instanceof ClientStalledError && !err.gone) letGo();
          throw err;
        })
    : undefined;
  // At once when nothing is pending: the 204 must be set before the headers would go out.
  const endedBefore = () => {
    const finish = () => {
      if (!res.headersSent && options.noContentWhenEnded) res.status(204);
      end();
    };
    if (pending) void pending.then(finish);
    else finish();
  };
  // The response's close, not the request's: the request closes once its body is read.
  res.on('close', () => end(true));
  try {
    stop = await options.follow(take, { onEnded: endedBefore, ...(ready ? { ready } : {}) });
  } catch (err) {
    if (err instanceof ClientStalledError) return;
    if (!res.headersSent || !options.failedFrames) {
      if (!ended) {
        ended = true;
        options.onClose?.();
      }
      throw err;
    }
    write(options.failedFrames());
    return end();
  }
  if (ended) stop();
  else if (!res.headersSent) {
    open();
    res.flushHeaders();
  }
}

/** One SSE frame: `data:` only, or with an `event:` name. */
export function sseFrame(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}
