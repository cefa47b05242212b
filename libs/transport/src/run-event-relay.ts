import type { EventDict } from '#core/events/execution-event.js';
import type { RunRelay } from '#core/run/run-ports.js';
import { jsonObject, RedisChannelListener } from './redis-channel.js';
import { isCluster, type RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';
import type { RunEventLog } from './run-event-log.js';

export type EventListener = (event: EventDict, raw: string) => void;

/** A run this process relays: its listeners, the last seq delivered, and live events held while a gap is read from the log. */
interface RunFeed {
  readonly listeners: Set<EventListener>;
  readonly opened: Promise<() => void>;
  last: number;
  held: Array<{ event: EventDict; raw: string }> | null;
}

/**
 * One Redis subscriber per process serving every local listener of runs' events. A run's events
 * travel on its own channel ({@link redisKeys.runChannel}, sharded on a cluster: one slot per run, so the
 * event path spreads over the masters); the channel is subscribed while the run has a listener
 * here, and each message is parsed once for all of them. A message lost on the way (a
 * reconnection, a failover) is read from the run's log as soon as the next one shows the gap, or
 * the subscriptions are back, so listeners get every seq in order.
 */
export class RunEventRelay implements RunRelay {
  private readonly channels: RedisChannelListener<EventDict>;
  private readonly feeds = new Map<string, RunFeed>();

  /**
   * Once the subscriptions are back after a reconnection (a single Redis) or a failover (a
   * cluster's sharded subscribers), each run is read from its log after the last event it
   * delivered: a message published while they were away, its done included, is not lost.
   */
  private readonly onResubscribed = () => {
    for (const [runId, feed] of this.feeds) if (!feed.held) this.catchUp(runId, feed);
  };
  private readonly resubscribedEvent: 'ready' | 'subscribersReady';

  constructor(private readonly subscriber: RedisClient, private readonly log: Pick<RunEventLog, 'rangeRaw'>) {
    const sharded = isCluster(subscriber);
    this.channels = new RedisChannelListener(subscriber, { guard: jsonObject<EventDict>, sharded });
    this.resubscribedEvent = sharded ? 'subscribersReady' : 'ready';
    subscriber.on(this.resubscribedEvent, this.onResubscribed);
  }

  /**
   * Starts relaying a run's events to `listener`. Resolves once the run's channel is
   * subscribed, so nothing published afterwards is missed.
   * @returns a function that stops this listener.
   * @throws what SUBSCRIBE throws; nothing stays subscribed then.
   */
  async watch(runId: string, listener: EventListener): Promise<() => void> {
    let feed = this.feeds.get(runId);
    if (!feed) {
      const opening: RunFeed = {
        listeners: new Set(),
        last: 0,
        held: null,
        opened: this.channels.listen(redisKeys.runChannel(runId), (event, raw) => this.live(runId, opening, event, raw)),
      };
      feed = opening;
      this.feeds.set(runId, feed);
    }
    const current = feed;
    current.listeners.add(listener);
    const stop = () => {
      if (!current.listeners.delete(listener) || current.listeners.size > 0) return;
      if (this.feeds.get(runId) === current) this.feeds.delete(runId);
      void current.opened.then((unsubscribe) => unsubscribe(), () => undefined);
    };
    try {
      await current.opened;
    } catch (err) {
      stop();
      throw err;
    }
    return stop;
  }

  /** Closes the subscriber connection (for a relay that owns it). */
  async close(): Promise<void> {
    this.subscriber.off(this.resubscribedEvent, this.onResubscribed);
    this.feeds.clear();
    this.channels.close();
    await this.subscriber.quit().catch(() => undefined);
  }

  /** Number of runs with at least one listener. */
  get watchedRuns(): number {
    return this.feeds.size;
  }

  /** An event from the run's channel: one that skips seqs is held while the ones it skipped are read from the log. */
  private live(runId: string, feed: RunFeed, event: EventDict, raw: string): void {
    if (feed.held) feed.held.push({ event, raw });
    else if (feed.last > 0 && event.seq > feed.last + 1) this.catchUp(runId, feed, { event, raw });
    else this.deliver(feed, event, raw);
  }

  /** Delivers what the run's log holds after the feed's last event, then what arrived live meanwhile. */
  private catchUp(runId: string, feed: RunFeed, first?: { event: EventDict; raw: string }): void {
    feed.held = first ? [first] : [];
    this.log
      .rangeRaw(runId, feed.last)
      .then((logged) => {
        for (const line of logged) this.deliver(feed, JSON.parse(line) as EventDict, line);
      })
      // The log could not be read: what was held still goes out, as from a relay without the log.
      .catch(() => undefined)
      .finally(() => this.release(feed));
  }

  private release(feed: RunFeed): void {
    const held = feed.held ?? [];
    feed.held = null;
    for (const { event, raw } of held) this.deliver(feed, event, raw);
  }

  private deliver(feed: RunFeed, event: EventDict, raw: string): void {
    if (event.seq <= feed.last) return;
    feed.last = event.seq;
    for (const listener of feed.listeners) {
      try {
        listener(event, raw);
      } catch (err) {
        // Reported as the channel listener reports a handler's throw; the other listeners still get the event.
        void Promise.reject(err);
      }
    }
  }
}
