import type { Redis } from 'ioredis';
import { redisKeys } from './redis-keys.js';

export type HitlStatus = 'pending' | 'approve' | 'reject' | 'timeout' | 'cancelled';

export interface HitlRecord {
  requestId: string;
  runId: string;
  sessionId: string;
  tenantId: string;
  userId: string;
  status: HitlStatus;
  message: string;
}

/**
 * Compare-and-set of a pending request: only its owner may decide, and only once.
 * Returns 'ok', 'missing' (unknown or another user's), or 'decided:<status>'.
 */
const DECIDE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local owner = redis.call('HMGET', KEYS[1], 'tenant_id', 'user_id', 'status')
if ARGV[1] ~= '*' and (owner[1] ~= ARGV[1] or owner[2] ~= ARGV[2]) then return 'missing' end
if owner[3] ~= 'pending' then return 'decided:' .. owner[3] end
redis.call('HSET', KEYS[1], 'status', ARGV[3], 'message', ARGV[4])
return 'ok'
`;

type DecideCommand = (key: string, tenant: string, user: string, status: string, message: string) => Promise<string>;

/** HITL requests in Redis: the durable record behind every decision message. */
export class HitlRequests {
  constructor(private readonly redis: Redis, private readonly ttlSeconds: number) {
    if (!(redis as unknown as { hitlDecide?: unknown }).hitlDecide) {
      redis.defineCommand('hitlDecide', { numberOfKeys: 1, lua: DECIDE_SCRIPT });
    }
  }

  /** Records a pending request (idempotent: a request already decided keeps its decision). */
  async open(record: Omit<HitlRecord, 'status' | 'message'>): Promise<void> {
    const key = redisKeys.hitlRequest(record.requestId);
    await this.redis
      .multi()
      .hsetnx(key, 'status', 'pending')
      .hset(key, { run_id: record.runId, session_id: record.sessionId, tenant_id: record.tenantId, user_id: record.userId })
      .expire(key, this.ttlSeconds)
      .exec();
  }

  async get(requestId: string): Promise<HitlRecord | null> {
    const h = await this.redis.hgetall(redisKeys.hitlRequest(requestId));
    if (!h.status) return null;
    return { requestId, runId: h.run_id, sessionId: h.session_id, tenantId: h.tenant_id, userId: h.user_id, status: h.status as HitlStatus, message: h.message ?? '' };
  }

  /**
   * Decides a pending request for its owner (`owner` null: the system, e.g. a timeout).
   * @returns 'ok' | 'missing' | 'decided:<status>'
   */
  async decide(requestId: string, owner: { tenantId: string; userId: string } | null, status: Exclude<HitlStatus, 'pending'>, message = ''): Promise<string> {
    const decide = (this.redis as unknown as { hitlDecide: DecideCommand }).hitlDecide.bind(this.redis);
    return decide(redisKeys.hitlRequest(requestId), owner?.tenantId ?? '*', owner?.userId ?? '*', status, message);
  }

  /** Approves the rest of a session's requests. */
  async approveAll(sessionId: string, ttlSeconds: number): Promise<void> {
    await this.redis.set(redisKeys.sessionApproveAll(sessionId), '1', 'EX', ttlSeconds);
  }

  async isApproveAll(sessionId: string): Promise<boolean> {
    return (await this.redis.exists(redisKeys.sessionApproveAll(sessionId))) === 1;
  }
}
