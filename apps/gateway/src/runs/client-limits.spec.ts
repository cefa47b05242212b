import { ClientStalledError, MessageRateLimit, waitForRoom } from './client-limits.js';

describe('waitForRoom', () => {
  it('resolves at once when the client is under half the limit', async () => {
    await expect(waitForRoom(() => 100, 1_000, () => false, 50)).resolves.toBeUndefined();
  });

  it('resolves once the client has read down below half the limit', async () => {
    let buffered = 900;
    const timer = setInterval(() => (buffered -= 100), 5);
    try {
      await expect(waitForRoom(() => buffered, 1_000, () => false, 5_000)).resolves.toBeUndefined();
      expect(buffered).toBeLessThanOrEqual(500);
    } finally {
      clearInterval(timer);
    }
  });

  it('gives up on a client that stays over the mark, whatever small moves its buffer makes', async () => {
    let buffered = 900;
    const timer = setInterval(() => (buffered = buffered === 900 ? 899 : 900), 5);
    try {
      await expect(waitForRoom(() => buffered, 1_000, () => false, 100)).rejects.toEqual(new ClientStalledError(false));
    } finally {
      clearInterval(timer);
    }
  });

  it('stops waiting when the client is gone', async () => {
    let closed = false;
    setTimeout(() => (closed = true), 30);
    await expect(waitForRoom(() => 900, 1_000, () => closed, 5_000)).rejects.toMatchObject({ gone: true });
  });
});

describe('MessageRateLimit', () => {
  it('allows a burst of twice the rate, then the rate', () => {
    const limit = new MessageRateLimit(10);
    const start = Date.now() + 1_000;
    let taken = 0;
    while (limit.take(start)) taken++;
    expect(taken).toBe(20);
    expect(limit.take(start + 50)).toBe(false);
    expect(limit.take(start + 100)).toBe(true);
  });
});
