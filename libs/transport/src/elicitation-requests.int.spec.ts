import { randomUUID } from 'node:crypto';
import { harnessRedisUrl } from '#test/support/harness-redis.js';
import { createRedis, type RedisClient } from './redis-connection.js';
import { ElicitationRequests } from './elicitation-requests.js';
import { redisKeys } from './redis-keys.js';

/** Elicitation records and their answer script against the harness Redis. */

let redis: RedisClient;
let requests: ElicitationRequests;

const owner = { tenantId: 'tenant-a', userId: 'user-a' };
const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };

function request(expiresIn = 60_000) {
  return { requestId: randomUUID(), runId: `spec-run-${randomUUID()}`, sessionId: `spec-session-${randomUUID()}`, ...owner, mode: 'form' as const, requestedSchema: schema, expiresAt: Date.now() + expiresIn };
}

beforeAll(() => {
  redis = createRedis(harnessRedisUrl(), 'spec-elicit');
  requests = new ElicitationRequests(redis, 600);
});

afterAll(async () => {
  await redis?.quit();
});

describe('ElicitationRequests (Redis)', () => {
  it('opens a pending request with its form and lets its owner answer it once', async () => {
    const r = request();
    await requests.open(r);
    expect(await requests.get(r.requestId)).toEqual({ ...r, status: 'pending' });
    expect(await redis.ttl(redisKeys.elicitationRequest(r.requestId))).toBeGreaterThan(590);

    const now = Date.now();
    expect(await requests.answer(r.requestId, { ...owner, now }, 'accept', { name: 'Ada' })).toEqual({ outcome: 'ok', runId: r.runId, sessionId: r.sessionId });
    expect(await requests.answer(r.requestId, { ...owner, now }, 'decline')).toEqual({ outcome: 'answered:accept' });
    expect(await requests.answer(r.requestId, null, 'cancel', undefined, 'expired')).toEqual({ outcome: 'answered:accept' });
    expect(await requests.get(r.requestId)).toMatchObject({ status: 'accept', content: { name: 'Ada' } });
  });

  it('finds nothing for another user, and refuses the owner past the expiry while the worker may still end it', async () => {
    const r = request(-1);
    await requests.open(r);
    expect(await requests.answer(r.requestId, { tenantId: 'tenant-a', userId: 'user-b', now: Date.now() }, 'accept', { name: 'x' })).toEqual({ outcome: 'missing' });
    expect(await requests.answer(r.requestId, { tenantId: 'tenant-b', userId: 'user-a', now: Date.now() }, 'accept', { name: 'x' })).toEqual({ outcome: 'missing' });
    expect(await requests.answer(r.requestId, { ...owner, now: Date.now() }, 'accept', { name: 'x' })).toEqual({ outcome: 'expired' });
    expect(await requests.answer(r.requestId, null, 'cancel', undefined, 'expired')).toMatchObject({ outcome: 'ok' });
    expect(await requests.get(r.requestId)).toMatchObject({ status: 'cancel', reason: 'expired' });
    expect(await requests.get(r.requestId)).not.toHaveProperty('content');
    expect(await requests.answer(`unknown-${randomUUID()}`, { ...owner, now: Date.now() }, 'decline')).toEqual({ outcome: 'missing' });
  });

  it('lets exactly one of many concurrent answers win', async () => {
    const r = request();
    await requests.open(r);
    const actions = ['accept', 'decline', 'cancel', 'accept', 'decline'] as const;
    const outcomes = await Promise.all(actions.map((action) => requests.answer(r.requestId, { ...owner, now: Date.now() }, action, action === 'accept' ? { name: action } : undefined)));
    expect(outcomes.filter((o) => o.outcome === 'ok')).toHaveLength(1);
  });
});
