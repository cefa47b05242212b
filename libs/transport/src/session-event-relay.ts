import type { Redis } from 'ioredis';
import type { EventDict } from '#core/events/execution-event.js';
import { redisKeys } from './redis-keys.js';

export type EventListener = (event: EventDict, raw: string) => void;

/**
 * One Redis subscriber per process serving every local listener: a session's channel is
 * subscribed while at least one listener watches it, and each message is parsed once.
 */
export class SessionEventRelay {
  private readonly listeners = new Map<string, Set<EventListener>>();
  private readonly pending = new Map<string, Promise<unknown>>();

  constructor(private readonly subscriber: Redis) {
    subscriber.on('message', (channel: string, raw: string) => this.dispatch(channel, raw));
  }

  /**
   * Starts relaying a session's events to `listener`. Resolves once the subscription is
   * active, so nothing published afterwards is missed.
   * @returns a function that stops this listener.
   */
  async watch(sessionId: string, listener: EventListener): Promise<() => void> {
    const channel = redisKeys.sessionChannel(sessionId);
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      this.pending.set(channel, this.subscriber.subscribe(channel));
    }
    set.add(listener);
    await this.pending.get(channel);
    return () => this.unwatch(channel, listener);
  }

  /** Closes the subscriber connection (for a relay that owns it). */
  async close(): Promise<void> {
    await this.subscriber.quit().catch(() => undefined);
  }

  /** Number of sessions with at least one listener. */
  get watchedSessions(): number {
    return this.listeners.size;
  }

  private unwatch(channel: string, listener: EventListener): void {
    const set = this.listeners.get(channel);
    if (!set?.delete(listener) || set.size > 0) return;
    this.listeners.delete(channel);
    this.pending.set(
      channel,
      this.subscriber.unsubscribe(channel).catch(() => undefined).finally(() => {
        if (!this.listeners.has(channel)) this.pending.delete(channel);
      }),
    );
  }

  private dispatch(channel: string, raw: string): void {
    const set = this.listeners.get(channel);
    if (!set) return;
    let event: EventDict;
    try {
      event = JSON.parse(raw) as EventDict;
    } catch {
      return;
    }
    for (const listener of set) listener(event, raw);
  }
}
