import type { Redis } from 'ioredis';
import type { EventDict } from '#core/events/execution-event.js';
import { jsonObject, RedisChannelListener } from './redis-channel.js';
import { redisKeys } from './redis-keys.js';

export type EventListener = (event: EventDict, raw: string) => void;

/**
 * One Redis subscriber per process serving every local listener: a session's channel is
 * subscribed while at least one listener watches it, and each message is parsed once.
 */
export class SessionEventRelay {
  private readonly channels: RedisChannelListener<EventDict>;

  constructor(private readonly subscriber: Redis) {
    this.channels = new RedisChannelListener(subscriber, { guard: jsonObject<EventDict> });
  }

  /**
   * Starts relaying a session's events to `listener`. Resolves once the subscription is
   * active, so nothing published afterwards is missed.
   * @returns a function that stops this listener.
   */
  watch(sessionId: string, listener: EventListener): Promise<() => void> {
    return this.channels.listen(redisKeys.sessionChannel(sessionId), listener);
  }

  /** Closes the subscriber connection (for a relay that owns it). */
  async close(): Promise<void> {
    this.channels.close();
    await this.subscriber.quit().catch(() => undefined);
  }

  /** Number of sessions with at least one listener. */
  get watchedSessions(): number {
    return this.channels.channelCount;
  }
}
