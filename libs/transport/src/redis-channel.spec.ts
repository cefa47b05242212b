import { EventEmitter } from 'node:events';
import type { RedisClient } from './redis-connection.js';
import { jsonObject, RedisChannelListener } from './redis-channel.js';

/** A subscriber connection that records SUBSCRIBE and UNSUBSCRIBE, and delivers what `publish` is given. */
function fakeSubscriber() {
  const emitter = new EventEmitter();
  const commands: string[] = [];
  const redis = Object.assign(emitter, {
    subscribe: async (channel: string) => void commands.push(`subscribe ${channel}`),
    unsubscribe: async (channel: string) => void commands.push(`unsubscribe ${channel}`),
  }) as unknown as RedisClient;
  const publish = (channel: string, raw: string) => emitter.emit('message', channel, raw);
  return { redis, commands, publish, listenerCount: () => emitter.listenerCount('message') };
}

interface Ping {
  n: number;
}
const ping = (value: unknown): Ping | null => (typeof (value as Ping | null)?.n === 'number' ? (value as Ping) : null);

describe('RedisChannelListener', () => {
  it('subscribes a channel once for its handlers, parses each message once, and leaves it after the last handler', async () => {
    const { redis, commands, publish } = fakeSubscriber();
    const channels = new RedisChannelListener(redis, { guard: ping });
    const a: Array<[Ping, string]> = [];
    const b: number[] = [];
    const stopA = await channels.listen('c', (m, raw) => a.push([m, raw]));
    const stopB = await channels.listen('c', (m) => b.push(m.n));
    publish('c', '{"n":1}');
    publish('other', '{"n":2}');
    stopA();
    publish('c', '{"n":3}');
    expect(a).toEqual([[{ n: 1 }, '{"n":1}']]);
    expect(b).toEqual([1, 3]);
    expect(channels.channelCount).toBe(1);
    stopB();
    stopB();
    await Promise.resolve();
    expect(commands).toEqual(['subscribe c', 'unsubscribe c']);
    expect(channels.channelCount).toBe(0);
  });

  it('drops text that is not JSON or that the guard refuses, and says so to onInvalid', async () => {
    const { redis, publish } = fakeSubscriber();
    const invalid: string[] = [];
    const channels = new RedisChannelListener(redis, { guard: ping, onInvalid: (channel, raw) => invalid.push(`${channel}:${raw}`) });
    const seen: number[] = [];
    await channels.listen('c', (m) => seen.push(m.n));
    publish('c', 'not json');
    publish('c', '{"n":"1"}');
    publish('c', 'null');
    publish('c', '{"n":4}');
    expect(seen).toEqual([4]);
    expect(invalid).toEqual(['c:not json', 'c:{"n":"1"}', 'c:null']);
  });

  it('lets listeners share a connection, each hearing only its own channels', async () => {
    const { redis, publish } = fakeSubscriber();
    const first = new RedisChannelListener(redis, { guard: ping });
    const second = new RedisChannelListener(redis, { guard: jsonObject<Record<string, unknown>> });
    const heard: string[] = [];
    await first.listen('one', (m) => heard.push(`one ${m.n}`));
    await second.listen('two', (m) => heard.push(`two ${JSON.stringify(m)}`));
    publish('one', '{"n":1}');
    publish('two', '{"x":2}');
    publish('two', '[3]');
    expect(heard).toEqual(['one 1', 'two {"x":2}']);
  });

  it('still delivers to the other handlers when one throws, and reports the throw', async () => {
    const { redis, publish } = fakeSubscriber();
    const errors: string[] = [];
    const channels = new RedisChannelListener(redis, { guard: ping, onHandlerError: (err, channel) => errors.push(`${channel}: ${(err as Error).message}`) });
    const seen: number[] = [];
    await channels.listen('c', () => {
      throw new Error('handler bug');
    });
    await channels.listen('c', (m) => seen.push(m.n));
    expect(() => publish('c', '{"n":1}')).not.toThrow();
    expect(seen).toEqual([1]);
    expect(errors).toEqual(['c: handler bug']);
  });

  it('subscribes again for a handler that comes while the last unsubscribe is in flight', async () => {
    const { redis, commands, publish } = fakeSubscriber();
    const channels = new RedisChannelListener(redis, { guard: ping });
    const stop = await channels.listen('c', () => undefined);
    stop();
    const seen: number[] = [];
    await channels.listen('c', (m) => seen.push(m.n));
    await Promise.resolve();
    publish('c', '{"n":1}');
    expect(seen).toEqual([1]);
    expect(commands).toEqual(['subscribe c', 'unsubscribe c', 'subscribe c']);
    expect(channels.channelCount).toBe(1);
  });

  it('keeps no handler whose SUBSCRIBE failed', async () => {
    const { redis } = fakeSubscriber();
    (redis as unknown as { subscribe: () => Promise<never> }).subscribe = () => Promise.reject(new Error('Connection is closed.'));
    const channels = new RedisChannelListener(redis, { guard: ping });
    await expect(channels.listen('c', () => undefined)).rejects.toThrow('Connection is closed.');
    expect(channels.channelCount).toBe(0);
  });

  it('stops reading the connection on close', async () => {
    const { redis, publish, listenerCount } = fakeSubscriber();
    const channels = new RedisChannelListener(redis, { guard: ping });
    const seen: number[] = [];
    await channels.listen('c', (m) => seen.push(m.n));
    channels.close();
    publish('c', '{"n":1}');
    expect(seen).toEqual([]);
    expect(listenerCount()).toBe(0);
    expect(channels.channelCount).toBe(0);
  });
});
