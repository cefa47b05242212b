import type { ErrorEventDict } from '#core/events/execution-event.js';

/**
 * How long a dropped client gets to take what was already written, its reason last, before its
 * socket is destroyed. What it holds meanwhile is bounded by the buffer limit.
 */
export const DROP_GRACE_MS = 10_000;

/** An error event the gateway itself sends a client (bad input, slow consumer, flood): a run's error event with details. */
export interface ErrorEventBody extends ErrorEventDict {
  error_code: string;
  details: Record<string, unknown>;
  recoverable: true;
}

/**
 * Which client a log line is about: its address and port, as the client knows its own end
 * (`?` when the socket is gone already).
 */
export function peerOf(socket: { remoteAddress?: string; remotePort?: number } | null | undefined): string {
  return `${socket?.remoteAddress ?? '?'}:${socket?.remotePort ?? '?'}`;
}

/** An error event from the gateway itself, shaped like the run's own events (seq 0: outside the log). */
export function gatewayErrorEvent(run: { sessionId: string; runId: string } | null, errorCode: string, error: string, details: Record<string, unknown> = {}): ErrorEventBody {
  return {
    event_type: 'error',
    timestamp: new Date().toISOString(),
    session_id: run?.sessionId ?? '',
    run_id: run?.runId ?? '',
    seq: 0,
    error,
    error_code: errorCode,
    details,
    recoverable: true,
  };
}

/**
 * The error a client gets when it falls too far behind and is dropped. It is recoverable: the
 * client reconnects and resumes from the last seq it received (resume message, Last-Event-ID).
 */
export function slowConsumerError(run: { sessionId: string; runId: string } | null, lastSentSeq: number, limit: number): ErrorEventBody {
  return gatewayErrorEvent(
    run,
    'slow_consumer',
    `The connection fell more than ${limit} bytes behind and was closed; reconnect and resume from the last seq you received`,
    { buffer_limit: limit, last_sent_seq: lastSentSeq },
  );
}

/** A token bucket: `rate` messages per second on average, bursts of `burst`. */
export class MessageRateLimit {
  private tokens: number;
  private at = Date.now();

  constructor(private readonly rate: number, private readonly burst = rate * 2) {
    this.tokens = burst;
  }

  /** Takes one token; false when the client is over its rate. */
  take(now = Date.now()): boolean {
    this.tokens = Math.min(this.burst, this.tokens + (Math.max(0, now - this.at) / 1000) * this.rate);
    this.at = Math.max(this.at, now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** Thrown by {@link waitForRoom}: the client went away, or took nothing for too long. */
export class ClientStalledError extends Error {
  constructor(readonly gone: boolean) {
    super(gone ? 'The client is gone' : 'The client stopped reading');
  }
}

/**
 * Resolves once less than half of `limit` waits for the client: a replay (whose size the
 * client chose) is paced by the client instead of being buffered whole.
 * @throws ClientStalledError when `closed()` turns true, or the client is not under the mark within `timeoutMs`.
 */
export async function waitForRoom(buffered: () => number, limit: number, closed: () => boolean, timeoutMs = DROP_GRACE_MS): Promise<void> {
  // Progress is getting under the mark, not any small decrease: bytes moving between engine.io's
  // queue and the socket's, or into a growing kernel buffer, are not the client reading.
  const deadline = Date.now() + timeoutMs;
  while (buffered() > limit / 2) {
    if (closed()) throw new ClientStalledError(true);
    if (Date.now() > deadline) throw new ClientStalledError(false);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (closed()) throw new ClientStalledError(true);
}
