import { EventQueue } from './event-queue.js';

describe('EventQueue', () => {
  it('yields what was pushed before and while iterating, in order, until ended', async () => {
    const queue = new EventQueue<number>();
    queue.push(1);
    const seen: number[] = [];
    const reading = (async () => {
      for await (const n of queue) seen.push(n);
    })();
    await Promise.resolve();
    queue.push(2);
    setImmediate(() => {
      queue.push(3);
      queue.end();
    });
    await reading;
    expect(seen).toEqual([1, 2, 3]);
  });
});
