import { createHash } from 'node:crypto';
import type { RedisClient } from '#transport/redis-connection.js';
import type { Caller } from '#core/auth/caller.js';
import { redisKeys } from '#transport/redis-keys.js';
import { ApiError } from '../../common/api-error.js';

/** What a request's Idempotency-Key found: nothing yet (this request runs), or the run an earlier request with the key started. */
export type IdempotentClaim = { kind: 'new' } | { kind: 'replay'; runId: string; sessionId: string };

interface StoredClaim {
  /** SHA-256 of the request body: the key may be reused only for the same request. */
  body: string;
  run_id?: string;
  session_id?: string;
}

const MAX_KEY_LENGTH = 255;

/**
 * Idempotency keys of the OpenAI-compatible door, per caller, in Redis (any gateway sees them):
 * a request sent again with the same `Idempotency-Key` (a client's retry after a dropped
 * connection or a 5xx) follows the run the first one started instead of starting another.
 */
export class IdempotentRequests {
  constructor(
    private readonly redis: RedisClient,
    private readonly ttlSeconds: number,
  ) {}

  /**
   * Claims `key` for a request with `body`.
   * @throws ApiError 400 for a key that is too long; 422 `idempotency_key_reused` when the key was
   *   used for another request; 409 `idempotency_key_in_use` while the first request with it is still being accepted.
   */
  async claim(caller: Caller, key: string, body: unknown): Promise<IdempotentClaim> {
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) throw new ApiError(400, 'invalid_request', `Idempotency-Key must be 1-${MAX_KEY_LENGTH} characters`, { fields: { 'idempotency-key': ['invalid'] } });
    const redisKey = this.keyOf(caller, key);
    const bodyHash = sha256(JSON.stringify(body));
    const claimed = await this.redis.set(redisKey, JSON.stringify({ body: bodyHash } satisfies StoredClaim), 'EX', this.ttlSeconds, 'NX');
    if (claimed === 'OK') return { kind: 'new' };
    const raw = await this.redis.get(redisKey);
    const found = raw ? (JSON.parse(raw) as StoredClaim) : null;
    if (!found) return this.claim(caller, key, body);
    if (found.body !== bodyHash) throw new ApiError(422, 'idempotency_key_reused', 'This Idempotency-Key was used for another request; send a new key for a new request', {}, { 'x-should-retry': 'false' });
    if (!found.run_id || !found.session_id) throw new ApiError(409, 'idempotency_key_in_use', 'The first request with this Idempotency-Key is still being accepted; retry shortly', {}, { 'Retry-After': '1' });
    return { kind: 'replay', runId: found.run_id, sessionId: found.session_id };
  }

  /** Records the run the request with `key` started: a retry with the key follows it. */
  async record(caller: Caller, key: string, body: unknown, run: { runId: string; sessionId: string }): Promise<void> {
    const record: StoredClaim = { body: sha256(JSON.stringify(body)), run_id: run.runId, session_id: run.sessionId };
    await this.redis.set(this.keyOf(caller, key), JSON.stringify(record), 'EX', this.ttlSeconds);
  }

  /** Frees `key` when its request started no run (it was refused): the client may send it again. */
  async release(caller: Caller, key: string): Promise<void> {
    await this.redis.del(this.keyOf(caller, key));
  }

  private keyOf(caller: Caller, key: string): string {
    return redisKeys.openAiIdempotency(caller.tenantId, caller.userId, sha256(key));
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
