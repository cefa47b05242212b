import type { Response } from 'express';

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
