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
