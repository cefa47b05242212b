import type { Socket } from 'socket.io-client';
import { assertWellFormedRun, connectChat } from './chat-clients.js';
import { isEventOf, type DoneEventDict, type EventDict, type EventDictOf, type EventType } from '#core/events/execution-event.js';

/** Collects every event a socket receives, and resolves waits on them as they arrive. */
export class EventCollector {
  readonly events: EventDict[] = [];
  private readonly waiters: Array<{ match: (e: EventDict) => boolean; resolve: (e: EventDict) => void }> = [];

  constructor(socket: Socket) {
    socket.on('event', (event: EventDict) => {
      this.events.push(event);
      for (const w of [...this.waiters]) {
        if (w.match(event)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(event);
        }
      }
    });
  }

  /** The first event (already received or future) that matches; of the type `match` narrows to, if it does. */
  next<E extends EventDict>(match: (e: EventDict) => e is E, timeoutMs?: number): Promise<E>;
  next(match: (e: EventDict) => boolean, timeoutMs?: number): Promise<EventDict>;
  next(match: (e: EventDict) => boolean, timeoutMs = 30_000): Promise<EventDict> {
    const seen = this.events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`event not seen in ${timeoutMs} ms; have ${this.events.map((e) => e.event_type).join(',')}`)), timeoutMs);
      this.waiters.push({ match, resolve: (e) => (clearTimeout(timer), resolve(e)) });
    });
  }

  ofRun(runId: string): EventDict[] {
    return this.events.filter((e) => e.run_id === runId);
  }

  done(runId: string, timeoutMs?: number): Promise<DoneEventDict> {
    return this.next(runEvent(runId, 'done'), timeoutMs);
  }
}

/** A match for {@link EventCollector.next}: the run's event of `type` (typed as one) for which `also` holds. */
export function runEvent<T extends EventType>(runId: string, type: T, also: (e: EventDictOf<T>) => boolean = () => true): (e: EventDict) => e is EventDictOf<T> {
  return (e: EventDict): e is EventDictOf<T> => e.run_id === runId && isEventOf(e, type) && also(e);
}

/** Sends a chat and returns its ack ({ok, session_id, run_id}). */
export function sendChat(socket: Socket, payload: Record<string, unknown>): Promise<{ ok: boolean; session_id: string; run_id: string; error_code?: string }> {
  return socket.timeout(30_000).emitWithAck('message', { type: 'chat', payload });
}

export function sendMessage(socket: Socket, type: string, payload: Record<string, unknown>): Promise<Record<string, any>> {
  return socket.timeout(30_000).emitWithAck('message', { type, payload });
}

/** Sends one chat on a fresh socket and returns that run's events, checked well formed. */
export async function chatToDone(url: string, apiKey: string, message: string): Promise<EventDict[]> {
  const socket = await connectChat(url, apiKey);
  const events = new EventCollector(socket);
  try {
    const ack = await sendChat(socket, { message });
    await events.done(ack.run_id);
    const run = events.ofRun(ack.run_id);
    assertWellFormedRun(run);
    return run;
  } finally {
    socket.disconnect();
  }
}

/**
 * Waits until `check` holds (it may ask a server), looking every 20 ms; fails after `timeoutMs`,
 * with what `explain` says then (the state a failure needs to be understood).
 */
export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, explain?: () => string | Promise<string>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met in time${explain ? `: ${await explain()}` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
