import type { RedisClient } from './redis-connection.js';

/** Hears one channel's messages: the checked message, and its text as published. */
export type ChannelHandler<T> = (message: T, raw: string) => void;

export interface ChannelListenerOptions<T> {
  /** Checks a message's parsed JSON: returns it as `T`, or null to drop it. */
  guard: (value: unknown) => T | null;
  /** Hears messages dropped as not JSON or refused by `guard`; absent, they are dropped silently. */
  onInvalid?: (channel: string, raw: string) => void;
  /**
   * Hears a handler's throw; the other handlers still get the message. Absent, the error is
   * reported as an unhandled rejection, which the gateway and the worker log.
   */
  onHandlerError?: (err: unknown, channel: string) => void;
  /**
   * Sharded channels (SSUBSCRIBE, Redis 7): on a cluster each is served by the master of its
   * slot, so a message travels to that shard's subscribers only. Absent: plain channels.
   */
  sharded?: boolean;
}

/**
 * Listens to Redis pub/sub channels, plain or sharded, on a subscriber connection (one in
 * subscriber mode: it takes no other command). A channel is subscribed while it has at least
 * one handler, and each message is parsed and checked once for all of them. ioredis subscribes
 * again by itself after a reconnection (`autoResubscribe`). Several listeners may share one
 * connection: each hears only the channels it subscribed.
 */
export class RedisChannelListener<T> {
  private readonly handlers = new Map<string, Set<ChannelHandler<T>>>();
  /** Each channel's last SUBSCRIBE or UNSUBSCRIBE; a listen waits for the SUBSCRIBE. */
  private readonly pending = new Map<string, Promise<unknown>>();
  private readonly onMessage = (channel: string, raw: string) => this.dispatch(channel, raw);
  private readonly messageEvent: 'message' | 'smessage';

  constructor(private readonly subscriber: RedisClient, private readonly options: ChannelListenerOptions<T>) {
    this.messageEvent = options.sharded ? 'smessage' : 'message';
    subscriber.on(this.messageEvent, this.onMessage);
  }

  /**
   * Sends `channel`'s messages to `handler`. Resolves once the channel is subscribed, so nothing
   * published afterwards is missed; a connection still connecting subscribes once it is ready.
   * @returns a function that stops this handler (the channel is left when it was the last one).
   * @throws what SUBSCRIBE throws; the handler is not kept then.
   */
  async listen(channel: string, handler: ChannelHandler<T>): Promise<() => void> {
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      this.pending.set(
        channel,
        handshakeDone(this.subscriber).then(() => (this.options.sharded ? this.subscriber.ssubscribe(channel) : this.subscriber.subscribe(channel))),
      );
    }
    set.add(handler);
    const stop = () => this.remove(channel, handler);
    try {
      await this.pending.get(channel);
    } catch (err) {
      stop();
      throw err;
    }
    return stop;
  }

  /** Number of channels with at least one handler. */
  get channelCount(): number {
    return this.handlers.size;
  }

  /**
   * Stops every handler and stops reading the connection. It does not unsubscribe or quit: the
   * connection is its owner's, and a command waits for as long as Redis is down.
   */
  close(): void {
    this.subscriber.off(this.messageEvent, this.onMessage);
    this.handlers.clear();
  }

  private remove(channel: string, handler: ChannelHandler<T>): void {
    const set = this.handlers.get(channel);
    if (!set?.delete(handler) || set.size > 0) return;
    this.handlers.delete(channel);
    // A listen that comes while this is in flight subscribes after it, on the same connection.
    this.pending.set(
      channel,
      (this.options.sharded ? this.subscriber.sunsubscribe(channel) : this.subscriber.unsubscribe(channel))
        .catch(() => undefined)
        .finally(() => {
          if (!this.handlers.has(channel)) this.pending.delete(channel);
        }),
    );
  }

  private dispatch(channel: string, raw: string): void {
    const set = this.handlers.get(channel);
    if (!set) return;
    const message = parse(raw, this.options.guard);
    if (message === null) {
      this.options.onInvalid?.(channel, raw);
      return;
    }
    for (const handler of set) {
      try {
        handler(message, raw);
      } catch (err) {
        // Thrown out of here it would unwind ioredis's reply parser, and every handler after it would miss the message.
        if (this.options.onHandlerError) this.options.onHandlerError(err, channel);
        else void Promise.reject(err);
      }
    }
  }
}

/**
 * Resolves once the connection has finished connecting (CLIENT SETNAME, the ready check). A
 * SUBSCRIBE sent before then can reach Redis ahead of the ready check's INFO, which Redis then
 * refuses in subscriber mode; ioredis connects again and the subscription is lost for good,
 * silently: about one listener in five made right after its connection heard nothing, ever.
 */
function handshakeDone(connection: RedisClient): Promise<void> {
  if (!CONNECTING.has(connection.status)) return Promise.resolve();
  // Or ended for good (quit while connecting): the SUBSCRIBE then fails, as it did before.
  return new Promise((resolve) => {
    const done = () => {
      connection.off('ready', done);
      connection.off('end', done);
      resolve();
    };
    connection.once('ready', done);
    connection.once('end', done);
  });
}

/** The states in which a connection is on its way to `ready` (a command sent in `wait`, lazily connecting, waits in ioredis's queue). */
const CONNECTING = new Set<string>(['connecting', 'connect', 'reconnecting']);

function parse<T>(raw: string, guard: (value: unknown) => T | null): T | null {
  try {
    return guard(JSON.parse(raw));
  } catch {
    return null;
  }
}

/** A guard for trusted publishers: any JSON object passes. */
export function jsonObject<T extends object>(value: unknown): T | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as T) : null;
}
