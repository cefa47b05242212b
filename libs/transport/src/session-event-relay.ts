import type { EventDict } from '#core/events/execution-event.js';
import { jsonObject, RedisChannelListener } from './redis-channel.js';
import { isCluster, type RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';
import type { RunEventLog } from './run-event-log.js';

export type EventListener = (event: EventDict, raw: string) => void;

/** What the relay reads besides its channels: a run's log, and a session's active runs. */
type RelayLog = Pick<RunEventLog, 'rangeRaw' | 'activeRuns'>;

interface RunAnnouncement {
  run_id: string;
}

/**
 * One Redis subscriber per process serving every local listener of a session's events. Events
 * travel on their run's channel (one slot per run on a cluster, so the event path spreads over
 * the masters); a session's channel only announces its new runs. While a session has a
 * listener here, the relay follows each of its active runs: those running when the first
 * listener came from then on, those announced later from their first event (read from the log
 * for what went out before the subscription). A message lost on the way (a reconnection, a
 * failover) is read from the log when the next one shows the gap. Each message is parsed once
 * for all listeners.
 */
export class SessionEventRelay {
  private readonly runChannels: RedisChannelListener<EventDict>;
  private readonly sessionChannels: RedisChannelListener<RunAnnouncement>;
  private readonly feeds = new Map<string, SessionFeed>();
  /** After a reconnection: announcements made while away were missed, so each feed lists its session's runs again. */
  private readonly onReady = () => {
    for (const feed of this.feeds.values()) void feed.resync().catch(() => undefined);
  };

  constructor(private readonly subscriber: RedisClient, private readonly log: RelayLog) {
    const sharded = isCluster(subscriber);
    this.runChannels = new RedisChannelListener(subscriber, { guard: jsonObject<EventDict>, sharded });
    this.sessionChannels = new RedisChannelListener(subscriber, { guard: runAnnouncement, sharded });
    subscriber.on('ready', this.onReady);
  }

  /**
   * Starts relaying a session's events to `listener`. Resolves once the session's channel and
   * each of its active runs' channels are subscribed, so nothing published afterwards is missed.
   * @returns a function that stops this listener.
   * @throws what SUBSCRIBE or reading the active runs throws; nothing stays subscribed then.
   */
  async watch(sessionId: string, listener: EventListener): Promise<() => void> {
    let feed = this.feeds.get(sessionId);
    if (!feed) {
      feed = new SessionFeed(sessionId, this.runChannels, this.sessionChannels, this.log);
      this.feeds.set(sessionId, feed);
    }
    feed.listeners.add(listener);
    const stop = () => {
      if (!feed.listeners.delete(listener) || feed.listeners.size > 0) return;
      if (this.feeds.get(sessionId) === feed) this.feeds.delete(sessionId);
      feed.close();
    };
    try {
      await feed.opened;
    } catch (err) {
      stop();
      throw err;
    }
    return stop;
  }

  /** Closes the subscriber connection (for a relay that owns it). */
  async close(): Promise<void> {
    this.subscriber.off('ready', this.onReady);
    for (const feed of this.feeds.values()) feed.close();
    this.feeds.clear();
    this.runChannels.close();
    this.sessionChannels.close();
    await this.subscriber.quit().catch(() => undefined);
  }

  /** Number of sessions with at least one listener. */
  get watchedSessions(): number {
    return this.feeds.size;
  }

  /** Number of runs whose channel is subscribed. */
  get followedRuns(): number {
    return this.runChannels.channelCount;
  }
}

/** A run the feed follows: the last seq it delivered, and the live events held while its start is read from the log. */
interface RunFollow {
  runId: string;
  last: number;
  held: Array<{ event: EventDict; raw: string }> | null;
  stop?: () => void;
  ended: boolean;
}

/** One session's events for this process's listeners. */
class SessionFeed {
  readonly listeners = new Set<EventListener>();
  readonly opened: Promise<void>;
  /** Every run followed while the feed is open, ended ones too: a late announcement or listing of one is not followed again. */
  private readonly runs = new Map<string, RunFollow>();
  private stopAnnouncements?: () => void;
  private closed = false;

  constructor(
    private readonly sessionId: string,
    private readonly runChannels: RedisChannelListener<EventDict>,
    private readonly sessionChannels: RedisChannelListener<RunAnnouncement>,
    private readonly log: RelayLog,
  ) {
    this.opened = this.open();
    // A failed open is the watch's to report; this keeps it from being an unhandled rejection too.
    this.opened.catch(() => undefined);
  }

  private async open(): Promise<void> {
    const stop = await this.sessionChannels.listen(redisKeys.sessionRunsChannel(this.sessionId), ({ run_id }) => {
      void this.follow(run_id, true);
    });
    if (this.closed) return stop();
    this.stopAnnouncements = stop;
    // Listed after subscribing: a run announced before the subscription is in the list.
    await this.resync(false);
  }

  /**
   * Follows the session's active runs not followed yet.
   * @param fromStart read each new one from its first event (after a reconnection, when its
   *   announcement may have been missed); false at open, when listeners want events from now on.
   */
  async resync(fromStart = true): Promise<void> {
    const active = await this.log.activeRuns(this.sessionId);
    await Promise.all(active.map(({ runId }) => this.follow(runId, fromStart)));
  }

  private async follow(runId: string, fromStart: boolean): Promise<void> {
    if (this.closed || this.runs.has(runId)) return;
    const run: RunFollow = { runId, last: 0, held: fromStart ? [] : null, ended: false };
    this.runs.set(runId, run);
    try {
      const stop = await this.runChannels.listen(redisKeys.runChannel(runId), (event, raw) => this.live(run, event, raw));
      if (run.ended || this.closed) return stop();
      run.stop = stop;
      if (fromStart) await this.catchUp(run);
    } catch {
      // Redis is away: the run is listed again once it is back (resync), unless its done came meanwhile.
      run.held = null;
      run.stop?.();
      if (!run.ended) this.runs.delete(runId);
    }
  }

  /**
   * An event from the run's channel. One that skips seqs (a message lost in a reconnection or a
   * failover) is held while the ones it skipped are read from the log.
   */
  private live(run: RunFollow, event: EventDict, raw: string): void {
    if (run.held) run.held.push({ event, raw });
    else if (run.last > 0 && event.seq > run.last + 1 && !run.ended) {
      run.held = [{ event, raw }];
      void this.catchUp(run).catch(() => {
        // The log could not be read: deliver what was held, as a relay without the log would.
        const held = run.held ?? [];
        run.held = null;
        for (const h of held) this.deliver(run, h.event, h.raw);
      });
    } else this.deliver(run, event, raw);
  }

  /** Delivers the run's logged events after the last one delivered, then the live ones held meanwhile. */
  private async catchUp(run: RunFollow): Promise<void> {
    run.held ??= [];
    for (const raw of await this.log.rangeRaw(run.runId, run.last)) this.deliver(run, JSON.parse(raw) as EventDict, raw);
    const held = run.held;
    run.held = null;
    for (const { event, raw } of held) this.deliver(run, event, raw);
  }

  private deliver(run: RunFollow, event: EventDict, raw: string): void {
    if (event.seq <= run.last || run.ended) return;
    run.last = event.seq;
    for (const listener of this.listeners) {
      try {
        listener(event, raw);
      } catch (err) {
        // Reported as the channel listener reports a handler's throw; the other listeners still get the event.
        void Promise.reject(err);
      }
    }
    if (event.event_type === 'done') {
      run.ended = true;
      run.stop?.();
      run.stop = undefined;
    }
  }

  close(): void {
    this.closed = true;
    this.stopAnnouncements?.();
    for (const run of this.runs.values()) run.stop?.();
    this.runs.clear();
  }
}

function runAnnouncement(value: unknown): RunAnnouncement | null {
  const m = value as Partial<RunAnnouncement> | null;
  return typeof m?.run_id === 'string' ? (m as RunAnnouncement) : null;
}
