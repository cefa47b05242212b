import { performance } from 'node:perf_hooks';
import { Agent, fetch } from 'undici';
import type { EventDict } from '#core/events/execution-event.js';
import { authHeaders, causeOf, ExchangeError, httpError, isFirstToken, type ChatTransport, type Exchange, type ServerTarget } from './chat-transport.js';

interface ChatAnswer {
  session_id: string;
  run_id: string;
  events: EventDict[];
}

/**
 * `POST /api/v1/chat`, which answers once the run is done. The events carry the server's
 * timestamps, so the time to first token is the first `text` event's timestamp minus the
 * moment the request left: it needs the two clocks to agree (one host, or NTP).
 */
export class RestTransport implements ChatTransport {
  constructor(
    private readonly target: ServerTarget,
    /** Shared by every slot; Harbor's own timeout, not undici's, ends a slow answer. */
    private readonly agent: Agent,
  ) {}

  async ask(message: string, signal: AbortSignal): Promise<Exchange> {
    const sentAt = Date.now();
    const start = performance.now();
    const res = await fetch(`${this.target.baseUrl}/api/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...authHeaders(this.target) },
      body: JSON.stringify({ message, assistant_id: this.target.assistantId }),
      signal,
      dispatcher: this.agent,
    }).catch((err: unknown) => {
      if (signal.aborted) throw signal.reason;
      throw new ExchangeError(`request failed: ${causeOf(err)}`);
    });
    const text = await res.text();
    const elapsed = performance.now() - start;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ExchangeError(`${res.status}: the answer is not JSON`);
    }
    if (res.status !== 200) throw httpError(res.status, body);
    const answer = body as ChatAnswer;
    if (!Array.isArray(answer.events)) throw new ExchangeError('200: the answer has no events');
    const first = answer.events.find(isFirstToken);
    const ttftMs = first ? Math.min(elapsed, Math.max(0, Date.parse(first.timestamp) - sentAt)) : null;
    return { events: answer.events, sessionId: answer.session_id, runId: answer.run_id, ttftMs };
  }

  async close(): Promise<void> {}
}

/** One connection pool for every REST request of a run; no undici timeout under Harbor's own. */
export function restAgent(): Agent {
  return new Agent({ headersTimeout: 0, bodyTimeout: 0 });
}
