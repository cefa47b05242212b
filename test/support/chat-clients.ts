import { io, type Socket } from 'socket.io-client';
import type { EventDict } from '#core/events/execution-event.js';

/** Connects a Socket.IO client to the gateway's /chat namespace. */
export async function connectChat(baseUrl: string, apiKey?: string): Promise<Socket> {
  const socket = io(`${baseUrl}/chat`, { transports: ['websocket'], auth: apiKey ? { apiKey } : {}, reconnection: false, forceNew: true });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', (err) => reject(err));
  });
  return socket;
}

/**
 * Sends one chat over a socket and collects that run's events until its done. The run is
 * identified by the message's acknowledgement, so many chats may share one socket.
 * A refused message resolves with the error event.
 */
export function chatOverSocket(socket: Socket, payload: Record<string, unknown>, timeoutMs = 60_000): Promise<EventDict[]> {
  return new Promise((resolve, reject) => {
    const seen: EventDict[] = [];
    let runId: string | undefined;
    const finish = (result: EventDict[] | Error) => {
      clearTimeout(timer);
      socket.off('event', onEvent);
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const timer = setTimeout(() => finish(new Error(`no done within ${timeoutMs} ms; saw ${seen.length} events, run ${runId}`)), timeoutMs);
    const check = () => {
      if (!runId) return;
      const mine = seen.filter((e) => e.run_id === runId);
      if (mine.some((e) => e.event_type === 'done')) finish(mine);
    };
    const onEvent = (event: EventDict) => {
      seen.push(event);
      check();
    };
    socket.on('event', onEvent);
    socket.emit('message', { type: 'chat', payload }, (ack: { ok: boolean; run_id?: string; error_code?: string }) => {
      if (!ack.ok) {
        const error = [...seen].reverse().find((e) => e.event_type === 'error' && e.error_code === ack.error_code);
        finish(error ? [error] : new Error(`refused: ${ack.error_code}`));
        return;
      }
      runId = ack.run_id;
      check();
    });
  });
}

export interface HttpAnswer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** A JSON request to the gateway; `body` may be a raw string to send malformed JSON. */
export async function api<T = any>(baseUrl: string, method: string, path: string, options: { body?: unknown; apiKey?: string; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<HttpAnswer<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  }
  const res = await fetch(`${baseUrl}/api/v1${path}`, { method, headers, body, signal: options.signal });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/**
 * What a client shows of a run once it applies `worker_lost`: the events between the error's
 * `resume_after_seq` and the error belong to a step the next worker redid, so they are dropped.
 */
export function continuedView(events: EventDict[]): EventDict[] {
  let kept: EventDict[] = [];
  for (const event of events) {
    if (event.event_type === 'error' && event.error_code === 'worker_lost' && event.resume_after_seq !== undefined) {
      const after = event.resume_after_seq;
      kept = kept.filter((e) => e.seq <= after);
    }
    kept.push(event);
  }
  return kept;
}

/** Checks a run's events: seq 1..n without gaps, exactly one done, and it is last. */
export function assertWellFormedRun(events: EventDict[]): void {
  const seqs = events.map((e) => e.seq);
  const expected = events.map((_, i) => i + 1);
  if (JSON.stringify(seqs) !== JSON.stringify(expected)) throw new Error(`seq not gapless: ${seqs.join(',')}`);
  const dones = events.filter((e) => e.event_type === 'done');
  if (dones.length !== 1 || events.at(-1)?.event_type !== 'done') throw new Error(`expected one final done, got ${dones.length}`);
  const runIds = new Set(events.map((e) => e.run_id));
  if (runIds.size !== 1) throw new Error(`events of several runs: ${[...runIds].join(',')}`);
}
