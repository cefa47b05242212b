import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';

/** Deletes the lock only if it is still ours (it may have expired and been taken). */
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

type ReleaseCommand = (key: string, token: string) => Promise<number>;

/**
 * A short lock per session around "look for active runs, then create one", so two chats that
 * arrive together on any gateways cannot both find the session idle and both start.
 */
export class SessionAdmission {
  constructor(private readonly redis: RedisClient, private readonly leaseMs = 10_000) {
    if (!(redis as unknown as { sessionAdmissionRelease?: unknown }).sessionAdmissionRelease) {
      redis.defineCommand('sessionAdmissionRelease', { numberOfKeys: 1, lua: RELEASE_SCRIPT });
    }
  }

  /**
   * Runs `work` while holding the session's admission lock.
   * @param waitMs how long to wait for a lock held by another admission; 0: do not wait.
   * @returns the work's result, or `busy` when the lock stayed taken.
   */
  async exclusive<T>(sessionId: string, waitMs: number, work: () => Promise<T>): Promise<T | 'busy'> {
    const key = redisKeys.sessionAdmission(sessionId);
    const token = randomUUID();
    const deadline = Date.now() + waitMs;
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      if ((await this.redis.set(key, token, 'PX', this.leaseMs, 'NX')) === 'OK') break;
      if (Date.now() + pause > deadline) return 'busy';
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
    try {
      return await work();
    } finally {
      const release = (this.redis as unknown as { sessionAdmissionRelease: ReleaseCommand }).sessionAdmissionRelease.bind(this.redis);
      await release(key, token).catch(() => undefined);
    }
  }
}
