import { RestartBackoff } from './restart-backoff.js';

describe('RestartBackoff', () => {
  it('doubles while processes die young, up to the maximum', () => {
    const backoff = new RestartBackoff(100, 1_000, 30_000);
    expect([0, 10, 10, 10, 10, 10].map((uptime) => backoff.next(uptime))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it('starts again from the first delay after a process that ran long enough', () => {
    const backoff = new RestartBackoff(100, 10_000, 30_000);
    backoff.next(5);
    backoff.next(5);
    expect(backoff.next(29_999)).toBe(400);
    expect(backoff.next(30_000)).toBe(100);
    expect(backoff.next(1)).toBe(200);
  });
});
