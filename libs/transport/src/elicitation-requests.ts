import type { RedisClient } from './redis-connection.js';
import type { ElicitationAction, ElicitationEndReason, ElicitationMode } from '#core/events/execution-event.js';
import { redisKeys } from './redis-keys.js';
import { luaScript } from './lua/lua-scripts.js';

export type ElicitationStatus = 'pending' | ElicitationAction;

export interface ElicitationRecord {
  requestId: string;
  runId: string;
  sessionId: string;
  tenantId: string;
  userId: string;
  mode: ElicitationMode;
  /** The form's schema as shown (formSchemaOf): the gateway checks an answer against it. */
  requestedSchema?: Record<string, unknown>;
  /** When it counts as `cancel` (epoch ms). */
  expiresAt: number;
  status: ElicitationStatus;
  /** An accepted form's content, defaults filled in. */
  content?: Record<string, unknown>;
  /** Why it ended without the person's answer. */
  reason?: ElicitationEndReason;
}

type AnswerCommand = (key: string, tenant: string, user: string, status: string, content: string, reason: string, now: string) => Promise<string[]>;

/** What an answer did: `ok` names the request's run; otherwise `missing`, `expired` or `answered:<status>`. */
export type AnswerOutcome = { outcome: 'ok'; runId: string; sessionId: string } | { outcome: string; runId?: undefined; sessionId?: undefined };

/**
 * Elicitations in Redis: the durable record behind every answer message. The worker opens one
 * while its call waits; a gateway records the person's answer on it and tells the worker.
 */
export class ElicitationRequests {
  /** @param ttlSeconds How long an opened request is kept; only workers open requests, so only they pass it. */
  constructor(private readonly redis: RedisClient, private readonly ttlSeconds?: number) {
    if (!(redis as unknown as { elicitationAnswer?: unknown }).elicitationAnswer) {
      redis.defineCommand('elicitationAnswer', { numberOfKeys: 1, lua: luaScript('elicitation-answer') });
    }
  }

  /** @throws Error when constructed without a TTL. */
  async open(record: Omit<ElicitationRecord, 'status' | 'content' | 'reason'>): Promise<void> {
    if (this.ttlSeconds === undefined) throw new Error('ElicitationRequests.open needs the TTL its constructor was not given');
    const key = redisKeys.elicitationRequest(record.requestId);
    await this.redis
      .multi()
      .hset(key, {
        status: 'pending',
        run_id: record.runId,
        session_id: record.sessionId,
        tenant_id: record.tenantId,
        user_id: record.userId,
        mode: record.mode,
        expires_at: String(record.expiresAt),
        ...(record.requestedSchema ? { requested_schema: JSON.stringify(record.requestedSchema) } : {}),
      })
      .expire(key, this.ttlSeconds)
      .exec();
  }

  async get(requestId: string): Promise<ElicitationRecord | null> {
    const h = await this.redis.hgetall(redisKeys.elicitationRequest(requestId));
    if (!h.status || !h.run_id) return null;
    return {
      requestId,
      runId: h.run_id,
      sessionId: h.session_id ?? '',
      tenantId: h.tenant_id ?? '',
      userId: h.user_id ?? '',
      mode: h.mode === 'url' ? 'url' : 'form',
      expiresAt: Number(h.expires_at),
      status: h.status as ElicitationStatus,
      ...(h.requested_schema ? { requestedSchema: JSON.parse(h.requested_schema) as Record<string, unknown> } : {}),
      ...(h.content ? { content: JSON.parse(h.content) as Record<string, unknown> } : {}),
      ...(h.reason ? { reason: h.reason as ElicitationEndReason } : {}),
    };
  }

  /**
   * Records the answer of a pending request, once: the owner's (with `now`, refused past the
   * expiry), or the worker's (`owner` null: an expiry or a cancel, with its reason).
   */
  async answer(requestId: string, owner: { tenantId: string; userId: string; now: number } | null, action: ElicitationAction, content?: Record<string, unknown>, reason?: ElicitationEndReason): Promise<AnswerOutcome> {
    const answer = (this.redis as unknown as { elicitationAnswer: AnswerCommand }).elicitationAnswer.bind(this.redis);
    const [outcome, runId, sessionId] = await answer(
      redisKeys.elicitationRequest(requestId),
      owner?.tenantId ?? '*',
      owner?.userId ?? '*',
      action,
      content ? JSON.stringify(content) : '',
      reason ?? '',
      owner ? String(owner.now) : '',
    );
    return outcome === 'ok' ? { outcome, runId: runId!, sessionId: sessionId! } : { outcome: outcome! };
  }
}
