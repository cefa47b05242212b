import type { RedisClient } from './redis-connection.js';
import type { DecideOutcome, HitlRecord, HitlRecords, HitlStatus } from '#core/run/run-ports.js';
import { redisKeys } from './redis-keys.js';
import { luaScript } from './lua/lua-scripts.js';


type DecideCommand = (key: string, tenant: string, user: string, status: string, message: string) => Promise<string[]>;

/** HITL requests in Redis: the durable record behind every decision message. */
export class HitlRequests implements HitlRecords {
  /** @param ttlSeconds How long an opened request is kept; only workers open requests, so only they pass it. */
  constructor(private readonly redis: RedisClient, private readonly ttlSeconds?: number) {
    if (!(redis as unknown as { hitlDecide?: unknown }).hitlDecide) {
      redis.defineCommand('hitlDecide', { numberOfKeys: 1, lua: luaScript('hitl-decide') });
    }
  }

  /**
   * Records a pending request. Idempotent: a request opened again (by the next worker of a run
   * whose worker died while asking) keeps its decision and the call it was first opened for.
   * @returns the request's status after opening: `pending`, or the decision already made.
   * @throws Error when constructed without a TTL.
   */
  async open(record: Omit<HitlRecord, 'status' | 'message'>): Promise<HitlStatus> {
    if (this.ttlSeconds === undefined) throw new Error('HitlRequests.open needs the TTL its constructor was not given');
    const key = redisKeys.hitlRequest(record.requestId);
    const multi = this.redis
      .multi()
      .hsetnx(key, 'status', 'pending')
      .hset(key, { run_id: record.runId, session_id: record.sessionId, tenant_id: record.tenantId, user_id: record.userId });
    if (record.tool !== undefined) multi.hsetnx(key, 'tool', record.tool);
    if (record.argsHash !== undefined) multi.hsetnx(key, 'args_hash', record.argsHash);
    if (record.expiresAt !== undefined) multi.hsetnx(key, 'expires_at', String(record.expiresAt));
    const replies = (await multi.expire(key, this.ttlSeconds).hget(key, 'status').exec()) as [Error | null, unknown][];
    return (replies.at(-1)?.[1] as HitlStatus | null) ?? 'pending';
  }

  async get(requestId: string): Promise<HitlRecord | null> {
    const h = await this.redis.hgetall(redisKeys.hitlRequest(requestId));
    if (!h.status) return null;
    return {
      requestId,
      runId: h.run_id,
      sessionId: h.session_id,
      tenantId: h.tenant_id,
      userId: h.user_id,
      status: h.status as HitlStatus,
      message: h.message ?? '',
      ...(h.tool === undefined ? {} : { tool: h.tool }),
      ...(h.args_hash === undefined ? {} : { argsHash: h.args_hash }),
      ...(h.expires_at === undefined ? {} : { expiresAt: Number(h.expires_at) }),
    };
  }

  /**
   * Decides a pending request for its owner (`owner` null: the system, e.g. a timeout). An
   * owner's decision after the request's deadline is refused (`expired`).
   * @returns `ok` with the request's run, `missing`, `expired`, or `decided:<status>`.
   */
  async decide(requestId: string, owner: { tenantId: string; userId: string } | null, status: Exclude<HitlStatus, 'pending'>, message = ''): Promise<DecideOutcome> {
    const decide = (this.redis as unknown as { hitlDecide: DecideCommand }).hitlDecide.bind(this.redis);
    const [outcome, runId, sessionId] = await decide(redisKeys.hitlRequest(requestId), owner?.tenantId ?? '*', owner?.userId ?? '*', status, message);
    return outcome === 'ok' ? { outcome, runId: runId!, sessionId: sessionId! } : { outcome };
  }

  /** Approves the rest of a session's requests. */
  async approveAll(sessionId: string, ttlSeconds: number): Promise<void> {
    await this.redis.set(redisKeys.sessionApproveAll(sessionId), '1', 'EX', ttlSeconds);
  }

  async isApproveAll(sessionId: string): Promise<boolean> {
    return (await this.redis.exists(redisKeys.sessionApproveAll(sessionId))) === 1;
  }
}
