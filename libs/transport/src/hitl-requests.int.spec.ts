import { randomUUID } from 'node:crypto';
import { waitUntil } from '#test/support/event-waits.js';
import { harnessRedisUrl } from '#test/support/harness-redis.js';
import { createRedis, type RedisClient } from './redis-connection.js';
import { HitlRequests } from './hitl-requests.js';
import { redisKeys } from './redis-keys.js';

/** HITL request records and their decide script against the harness Redis. */

let redis: RedisClient;
let others: RedisClient[];
let requests: HitlRequests;

const owner = { tenantId: 'tenant-a', userId: 'user-a' };

function request(fields: { tool?: string; argsHash?: string } = { tool: 'http_request', argsHash: 'hash-1' }) {
  return { requestId: `spec-hitl-${randomUUID()}`, runId: `spec-run-${randomUUID()}`, sessionId: `spec-session-${randomUUID()}`, ...owner, ...fields };
}

beforeAll(async () => {
  const url = harnessRedisUrl();
  redis = createRedis(url, 'spec-hitl');
  others = [1, 2, 3].map((i) => createRedis(url, `spec-hitl-${i}`));
  requests = new HitlRequests(redis, 600);
});

afterAll(async () => {
  await Promise.all([redis, ...others].map((c) => c?.quit()));
});

describe('HitlRequests (Redis)', () => {
  it('opens a pending request and lets its owner decide it once', async () => {
    const r = request();
    expect(await requests.open(r)).toBe('pending');
    expect(await requests.get(r.requestId)).toEqual({ ...r, status: 'pending', message: '' });

    expect(await requests.decide(r.requestId, owner, 'approve', 'go')).toEqual({ outcome: 'ok', runId: r.runId, sessionId: r.sessionId });
    expect(await requests.decide(r.requestId, owner, 'reject', 'changed my mind')).toEqual({ outcome: 'decided:approve' });
    expect(await requests.decide(r.requestId, null, 'timeout')).toEqual({ outcome: 'decided:approve' });
    expect(await requests.get(r.requestId)).toEqual({ ...r, status: 'approve', message: 'go' });
  });

  it('refuses an owner’s decision once Redis’s clock has passed the deadline, and leaves the request for its expiry to close', async () => {
    const [seconds, micros] = await redis.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    // A deadline just gone by Redis's clock, whatever this process's clock says.
    const late = { ...request(), expiresAt: now - 1 };
    await requests.open(late);
    expect(await requests.decide(late.requestId, owner, 'approve', 'too late')).toEqual({ outcome: 'expired' });
    expect(await requests.decide(late.requestId, owner, 'approve', 'again')).toEqual({ outcome: 'expired' });
    expect((await requests.get(late.requestId))?.status).toBe('pending');
    // The system still closes it, and the owner then reads the timeout.
    expect((await requests.decide(late.requestId, null, 'timeout', 'No decision in time')).outcome).toBe('ok');
    expect(await requests.decide(late.requestId, owner, 'approve')).toEqual({ outcome: 'decided:timeout' });
    // A deadline still ahead takes the decision.
    const inTime = { ...request(), expiresAt: now + 60_000 };
    await requests.open(inTime);
    expect((await requests.decide(inTime.requestId, owner, 'approve')).outcome).toBe('ok');
  });

  it('refuses another user or tenant as if the request did not exist, and leaves it pending', async () => {
    const r = request();
    await requests.open(r);
    expect(await requests.decide(r.requestId, { tenantId: owner.tenantId, userId: 'user-b' }, 'approve')).toEqual({ outcome: 'missing' });
    expect(await requests.decide(r.requestId, { tenantId: 'tenant-b', userId: owner.userId }, 'approve')).toEqual({ outcome: 'missing' });
    expect(await requests.decide(`spec-hitl-${randomUUID()}`, owner, 'approve')).toEqual({ outcome: 'missing' });
    expect((await requests.get(r.requestId))?.status).toBe('pending');
    // The system (a timeout) decides for anyone.
    expect(await requests.decide(r.requestId, null, 'timeout', 'no answer')).toMatchObject({ outcome: 'ok', runId: r.runId });
    expect(await requests.get(r.requestId)).toMatchObject({ status: 'timeout', message: 'no answer' });
  });

  it('lets exactly one of many concurrent decisions win', async () => {
    const r = request();
    await requests.open(r);
    const statuses = ['approve', 'reject', 'cancelled', 'timeout'] as const;
    const deciders = [redis, ...others].map((c) => new HitlRequests(c));
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) => deciders[i % deciders.length].decide(r.requestId, i % 2 ? owner : null, statuses[i % statuses.length], `decider ${i}`)),
    );
    const winners = outcomes.map((o, i) => [o.outcome, i] as const).filter(([o]) => o === 'ok');
    expect(winners).toHaveLength(1);
    const winner = winners[0][1];
    const stored = await requests.get(r.requestId);
    expect(stored).toMatchObject({ status: statuses[winner % statuses.length], message: `decider ${winner}` });
    expect(outcomes.filter((_, i) => i !== winner).map((o) => o.outcome)).toEqual(Array(39).fill(`decided:${stored!.status}`));
  });

  it('keeps the decision and the call it was opened for when opened again', async () => {
    const r = request();
    await requests.open(r);
    expect(await requests.open({ ...r, tool: 'shell', argsHash: 'hash-2' })).toBe('pending');
    await requests.decide(r.requestId, owner, 'reject', 'no');
    expect(await requests.open({ ...r, tool: 'shell', argsHash: 'hash-2' })).toBe('reject');
    expect(await requests.get(r.requestId)).toEqual({ ...r, status: 'reject', message: 'no' });
  });

  it('records a request without a tool or arguments hash', async () => {
    const r = request({});
    await requests.open(r);
    expect(await requests.get(r.requestId)).toEqual({ ...r, status: 'pending', message: '' });
  });

  it('refuses to open a request without a TTL', async () => {
    await expect(new HitlRequests(redis).open(request())).rejects.toThrow('TTL');
  });

  it('forgets a request after its TTL: it can no longer be decided', async () => {
    const short = new HitlRequests(redis, 1);
    const r = request();
    await short.open(r);
    const pttl = await redis.pttl(redisKeys.hitlRequest(r.requestId));
    expect(pttl > 0 && pttl <= 1_000).toBe(true);
    await waitUntil(async () => (await redis.exists(redisKeys.hitlRequest(r.requestId))) === 0, 5_000);
    expect(await short.get(r.requestId)).toBeNull();
    expect(await short.decide(r.requestId, owner, 'approve')).toEqual({ outcome: 'missing' });
  });

  it('approves the rest of one session for the time given', async () => {
    const session = `spec-session-${randomUUID()}`;
    const other = `spec-session-${randomUUID()}`;
    expect(await requests.isApproveAll(session)).toBe(false);
    await requests.approveAll(session, 1);
    expect(await requests.isApproveAll(session)).toBe(true);
    expect(await requests.isApproveAll(other)).toBe(false);
    await waitUntil(async () => !(await requests.isApproveAll(session)), 5_000);
  });
});
