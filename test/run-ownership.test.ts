import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { AGENT_DEFAULTS } from '#core/engine/agent-config.js';
import { AgentExecutor } from '#core/engine/agent-executor.js';
import { RunEventLog } from '#transport/run-event-log.js';
import { HitlRequests } from '#transport/hitl-requests.js';
import { RedisRunLedger } from '#transport/run-ledger.js';
import { TextEvent } from '#core/events/execution-event.js';
import type { ApprovalRequest, HitlHandler } from '#core/hitl/hitl-handler.js';
import { argsHash } from '#core/tools/call-hash.js';
import { DecisionWaiters } from '../apps/worker/src/hitl/decision-waiters.js';
import { RedisHitlHandler } from '../apps/worker/src/hitl/redis-hitl-handler.js';
import { RunFencedError, RunLedger } from '#core/run/run-ports.js';

/** Against the harness's Redis: one owner per run, and approvals bound to the call they approve. */
describe('run ownership and approval binding', () => {
  let redis: Redis;
  let log: RunEventLog;
  let ledger: RunLedger;
  let requests: HitlRequests;

  beforeAll(() => {
    redis = new Redis(process.env.DATAAGENT_REDIS_URL!, { maxRetriesPerRequest: null });
    log = new RunEventLog(redis, { retentionSeconds: 600 });
    ledger = new RedisRunLedger(redis, 600);
    requests = new HitlRequests(redis, 600);
  });
  afterAll(() => redis.disconnect());

  it('fences off the earlier owner: its appends, steps and intents are refused once another worker claims the run', async () => {
    const runId = randomUUID();
    const envelope = { sessionId: 's', runId };
    const first = await ledger.claim(runId);
    expect(first).toBe(1);
    expect((await log.append(new TextEvent(envelope, 'a').toDict(), first)).status).toBe('appended');
    await ledger.recordStep(runId, first, { seq: 1, message: { role: 'assistant', content: 'a' } });
    expect(await ledger.intend(runId, first, 'c1', 'h', 'send')).toBe('new');

    const second = await ledger.claim(runId);
    expect(second).toBe(2);
    expect((await log.append(new TextEvent(envelope, 'late').toDict(), first)).status).toBe('fenced');
    await expect(ledger.recordStep(runId, first, { seq: 1, message: { role: 'assistant', content: 'late' } })).rejects.toBeInstanceOf(RunFencedError);
    await expect(ledger.intend(runId, first, 'c2', 'h', 'send')).rejects.toBeInstanceOf(RunFencedError);

    // The new owner sees what the first recorded, and the intent the first left open.
    expect(await ledger.steps(runId)).toEqual([{ seq: 1, message: { role: 'assistant', content: 'a' } }]);
    expect(await ledger.intend(runId, second, 'c1', 'h', 'send')).toBe('interrupted');
    expect((await log.append(new TextEvent(envelope, 'b').toDict(), second)).status).toBe('appended');
    expect((await log.range(runId, 0)).map((e) => [e.seq, e.event_type === 'text' && e.content])).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
  });

  it('applies a decision only to the call it was asked about', async () => {
    const requestId = `${randomUUID()}:c1`;
    const caller = { tenantId: 't', userId: 'u', role: 'user' as const };
    const handler = () => new RedisHitlHandler(requests, new DecisionWaiters(), caller, { timeoutMs: 5_000 });
    const ask = (args: Record<string, unknown>): ApprovalRequest => ({ requestId, runId: 'r', sessionId: 's', action: { name: 'send', args }, argsHash: argsHash(args) });

    const asking = handler();
    expect(await asking.open(ask({ to: 'x' }))).toBe('ask');
    expect((await requests.decide(requestId, { tenantId: 't', userId: 'u' }, 'approve')).outcome).toBe('ok');

    // The next worker asking about the same call finds the decision and applies it without asking.
    const same = handler();
    expect(await same.open(ask({ to: 'x' }))).toBe('decided');
    expect(await same.requestApproval({ name: 'send', args: { to: 'x' } }, 's', new AbortController().signal, requestId)).toMatchObject({ type: 'approve' });

    // Under the same id, other arguments are another call: that approval does not cover them.
    const other = handler();
    await other.open(ask({ to: 'someone else' }));
    expect(await other.requestApproval({ name: 'send', args: { to: 'someone else' } }, 's', new AbortController().signal, requestId)).toMatchObject({ type: 'reject' });
  });

  it('asks anew when a call id comes back with other arguments: the request id carries their hash', async () => {
    const opened: string[] = [];
    const hitl: HitlHandler = {
      open: async (request) => (opened.push(request.requestId), 'ask'),
      requestApproval: async () => ({ type: 'approve' }),
    };
    const run = async (value: string) => {
      const exec = new AgentExecutor({
        id: 'a',
        name: 'a',
        description: '',
        systemPrompt: '',
        middleware: [],
        ...AGENT_DEFAULTS,
        hitl,
        tools: [{ name: 'send', description: '', parameters: { type: 'object' }, sensitive: true, execute: async () => ({ success: true, output: 'sent' }) }],
        model: {
          id: 'm',
          async *stream(req) {
            if (req.messages.at(-1)?.role === 'tool') yield { type: 'text' as const, text: 'ok' };
            else yield { type: 'tool_calls' as const, calls: [{ id: 'same-id', name: 'send', arguments: { value } }] };
          },
        },
      });
      for await (const _ of exec.execute('go', 's', { runId: 'run-1', caller: { tenantId: 't', userId: 'u', role: 'user' }, history: [], signal: new AbortController().signal })) void _;
    };
    await run('a');
    await run('a');
    await run('b');
    expect(opened[0]).toBe(opened[1]);
    expect(opened[2]).not.toBe(opened[0]);
    expect(opened.every((id) => id.startsWith('run-1:same-id:'))).toBe(true);
  });
});
