import { EventEmitter } from 'node:events';
import type { EventDict } from '#core/events/execution-event.js';
import type { RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';
import { RunEventRelay } from './run-event-relay.js';

/** A subscriber connection that records SUBSCRIBE and UNSUBSCRIBE, and delivers what `publish` is given. */
function fakeSubscriber() {
  const emitter = new EventEmitter();
  const commands: string[] = [];
  const redis = Object.assign(emitter, {
    subscribe: async (channel: string) => void commands.push(`subscribe ${channel}`),
    unsubscribe: async (channel: string) => void commands.push(`unsubscribe ${channel}`),
    quit: async () => 'OK',
  }) as unknown as RedisClient;
  const publish = (runId: string, event: EventDict) => emitter.emit('message', redisKeys.runChannel(runId), JSON.stringify(event));
  return { redis, commands, publish, emitter };
}

const event = (seq: number): EventDict => ({ event_type: 'text', timestamp: '', session_id: 's', run_id: 'r', seq, content: `t${seq}`, is_final: false });
const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('RunEventRelay', () => {
  it('fills a gap from the log before the event that showed it', async () => {
    const { redis, publish } = fakeSubscriber();
    const reads: Array<[string, number]> = [];
    const relay = new RunEventRelay(redis, { rangeRaw: async (runId: string, after = 0) => (reads.push([runId, after]), [2, 3].filter((seq) => seq > after).map((seq) => JSON.stringify(event(seq)))) });
    const seen: number[] = [];
    await relay.watch('r', (e) => seen.push(e.seq));
    publish('r', event(1));
    publish('r', event(3));
    publish('r', event(4));
    await flush();
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(reads).toEqual([['r', 1]]);
  });

  it('still delivers what it held when the log cannot be read, or holds something unreadable', async () => {
    for (const rangeRaw of [async () => Promise.reject(new Error('Connection is closed.')), async () => ['not json']]) {
      const { redis, publish } = fakeSubscriber();
      const relay = new RunEventRelay(redis, { rangeRaw });
      const seen: number[] = [];
      await relay.watch('r', (e) => seen.push(e.seq));
      publish('r', event(1));
      publish('r', event(3));
      await flush();
      publish('r', event(4));
      expect(seen).toEqual([1, 3, 4]);
    }
  });

  it('reads each watched run from its log once its subscriptions are back, and delivers nothing twice', async () => {
    const { redis, publish, emitter } = fakeSubscriber();
    const logged = [1, 2, 3].map((seq) => JSON.stringify(event(seq)));
    const relay = new RunEventRelay(redis, { rangeRaw: async (_runId: string, after = 0) => logged.slice(after) });
    const seen: number[] = [];
    await relay.watch('r', (e) => seen.push(e.seq));
    publish('r', event(1));
    emitter.emit('ready');
    await flush();
    expect(seen).toEqual([1, 2, 3]);
  });

  it('subscribes a run once for its listeners and leaves it after the last one', async () => {
    const { redis, commands, publish } = fakeSubscriber();
    const relay = new RunEventRelay(redis, { rangeRaw: async () => [] });
    const a: number[] = [];
    const b: number[] = [];
    const stopA = await relay.watch('r', (e) => a.push(e.seq));
    const stopB = await relay.watch('r', (e) => b.push(e.seq));
    publish('r', event(1));
    stopA();
    publish('r', event(2));
    stopB();
    await flush();
    expect([a, b, relay.watchedRuns]).toEqual([[1], [1, 2], 0]);
    expect(commands).toEqual([`subscribe ${redisKeys.runChannel('r')}`, `unsubscribe ${redisKeys.runChannel('r')}`]);
  });
});
