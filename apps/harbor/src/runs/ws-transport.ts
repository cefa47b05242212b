import { performance } from 'node:perf_hooks';
import { fetch, type Agent } from 'undici';
import WebSocket from 'ws';
import type { EventDict } from '#core/events/execution-event.js';
import { authHeaders, causeOf, ExchangeError, httpError, type ChatTransport, type Exchange, type ServerTarget } from './chat-transport.js';
import { RunEvents, type MessageAck } from './run-events.js';

/**
 * Plain WebSocket: a connection is bound to one session, so each question creates its session
 * (`POST /api/v1/sessions`), connects to `/ws/chat/{session_id}` and sends `chat` there. The
 * time to first token counts from the `chat` message, as over Socket.IO.
 */
export class WsTransport implements ChatTransport {
  constructor(
    private readonly target: ServerTarget,
    private readonly agent: Agent,
  ) {}

  async ask(message: string, signal: AbortSignal): Promise<Exchange> {
    const sessionId = await this.createSession(signal);
    const url = `${this.target.baseUrl.replace(/^http/, 'ws')}/ws/chat/${encodeURIComponent(sessionId)}`;
    const ws = new WebSocket(url, { headers: authHeaders(this.target) });
    let run: RunEvents | undefined;
    try {
      return await new Promise<Exchange>((resolve, reject) => {
        const finish = (outcome: Exchange | Error) => {
          signal.removeEventListener('abort', onAbort);
          if (outcome instanceof Error) reject(outcome);
          else resolve(outcome);
        };
        const onAbort = () => {
          // Stops the run, which would go on without anyone reading it.
          if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'cancel', payload: { session_id: sessionId } }));
          finish(signal.reason as Error);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        ws.on('unexpected-response', (_req, res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => finish(httpError(res.statusCode ?? 0, safeJson(text))));
        });
        ws.on('error', (err) => finish(new ExchangeError(`WebSocket failed: ${err.message}`)));
        ws.on('close', (code, reason) => finish(new ExchangeError(`the WebSocket closed before the run ended: ${code}${reason.length ? ` ${reason.toString()}` : ''}`)));
        ws.on('open', () => {
          run = new RunEvents(performance.now());
          ws.send(JSON.stringify({ type: 'chat', payload: { message, assistant_id: this.target.assistantId } }));
        });
        ws.on('message', (data) => {
          const frame = safeJson(data.toString()) as (EventDict & { type?: undefined }) | (MessageAck & { type: string }) | undefined;
          if (!frame || !run) return;
          if (frame.type === 'ack') {
            const refused = run.acknowledge(frame as MessageAck);
            if (refused) return finish(refused);
          } else if (frame.type === undefined && 'event_type' in frame) {
            run.add(frame);
          }
          const exchange = run.exchange();
          if (exchange) finish(exchange);
        });
      });
    } finally {
      ws.removeAllListeners();
      // An error listener stays: closing a socket that is still connecting reports one.
      ws.on('error', () => undefined);
      ws.close();
    }
  }

  async close(): Promise<void> {}

  private async createSession(signal: AbortSignal): Promise<string> {
    const res = await fetch(`${this.target.baseUrl}/api/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...authHeaders(this.target) },
      body: JSON.stringify({ assistant_id: this.target.assistantId }),
      signal,
      dispatcher: this.agent,
    }).catch((err: unknown) => {
      if (signal.aborted) throw signal.reason;
      throw new ExchangeError(`creating the session failed: ${causeOf(err)}`);
    });
    const body = safeJson(await res.text()) as { session_id?: string } | undefined;
    if (res.status !== 200 && res.status !== 201) throw httpError(res.status, body);
    if (!body?.session_id) throw new ExchangeError(`${res.status}: the new session has no session_id`);
    return body.session_id;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
