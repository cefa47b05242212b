import type { RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';
import { takeLease, type Lease } from './redis-lease.js';

/**
 * A short lock per session around "look for active runs, then create one", so two chats that
 * arrive together on any gateways cannot both find the session idle and both start.
 */
export class SessionAdmission {
  constructor(private readonly redis: RedisClient, private readonly leaseMs = 10_000) {}

  /**
   * Runs `work` while holding the session's admission lock.
   * @param waitMs how long to wait for a lock held by another admission; 0: do not wait.
   * @returns the work's result, or `busy` when the lock stayed taken.
   */
  async exclusive<T>(sessionId: string, waitMs: number, work: () => Promise<T>): Promise<T | 'busy'> {
    const key = redisKeys.sessionAdmission(sessionId);
    const deadline = Date.now() + waitMs;
    let lease: Lease | null;
    for (let pause = 5; !(lease = await takeLease(this.redis, key, this.leaseMs)); pause = Math.min(pause * 2, 100)) {
      if (Date.now() + pause > deadline) return 'busy';
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
    try {
      return await work();
    } finally {
      await lease.release().catch(() => undefined);
    }
  }
}
