import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { WebSocket } from 'ws';
import type { EventDict, HitlRequestEventDict } from '#core/events/execution-event.js';
import type { MysqlConfig } from '#core/config/settings.js';
import { createConversationStore } from '#persistence/create-conversation-store.js';
import { redisKeys } from '#transport/redis-keys.js';
import { RunQueue } from '#transport/run-queue.js';
import { api, assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { mysqlSettings } from './support/databases.js';
import { EventCollector, runEvent, sendChat, sendMessage, waitUntil } from './support/event-waits.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

/**
 * Expiries that expire (red team): a question nobody answered by its deadline ends its run,
 * `timeout`, on time, whether workers are up or all of them are dead, and no decision sent after
 * the deadline is ever applied, whichever door it comes through.
 */

const write = (path: string) => `[[tool:write_file {"path":"${path}","content":"too late"}]]`;

/** Redis's clock, which the decide script and the expiry sweep judge deadlines by. */
async function redisNow(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** What one door answered a decision with: its HTTP status and DataAgent's error code, wherever the door's protocol puts it. */
interface DoorAnswer {
  status: number;
  error_code: unknown;
}

async function post(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_API_KEY }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** A raw WebSocket on the session, sending one decision and reading its acknowledgement. */
async function decideOverRawWebSocket(baseUrl: string, sessionId: string, requestId: string): Promise<Record<string, any>> {
  const ws = new WebSocket(`${baseUrl.replace('http', 'ws')}/ws/chat/${sessionId}`, { headers: { 'x-api-key': TEST_API_KEY } });
  try {
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const ack = new Promise<Record<string, any>>((resolve) =>
      ws.on('message', (data) => {
        const message = JSON.parse(data.toString()) as Record<string, any>;
        if (message.type === 'ack') resolve(message);
      }),
    );
    ws.send(JSON.stringify({ type: 'hitl_decision', payload: { request_id: requestId, decision: 'approve' } }));
    return await ack;
  } finally {
    ws.close();
  }
}

describe('a decision after its deadline, with every worker killed', () => {
  let system: TestSystem;
  let redis: Redis;
  let queue: RunQueue;

  beforeAll(async () => {
    // One run of the tenant at a time: the expired run's slot must come back for the next chat to get in.
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_HITL_TIMEOUT: '5', DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT: '1' } });
    redis = new Redis(process.env.DATAAGENT_REDIS_URL!, { maxRetriesPerRequest: null });
    queue = new RunQueue(redis, system.env.DATAAGENT_QUEUE_NAME!);
  });
  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    await system?.stop();
  });

  it('is refused 409 timeout at every door; the run ends timeout on time with no worker, once, and the tool never runs when one comes back', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    const store = await createConversationStore('mysql', { ...mysqlSettings(system.env), poolSize: 2 } as MysqlConfig);
    const file = join(system.dataDir, 'workspaces', 'acme', 'alice', 'files/late.txt');
    try {
      const ack = await sendChat(socket, { message: write('files/late.txt') });
      const request: HitlRequestEventDict = await events.next(runEvent(ack.run_id, 'hitl_request'));
      const call = await events.next(runEvent(ack.run_id, 'tool_call'));
      const deadline = Date.parse(request.expires_at ?? '');
      await waitUntil(async () => (await queue.jobState(ack.run_id)) === 'delayed', 20_000);
      // kill -9 of every worker: nothing that runs in a worker can refuse or expire anything now.
      await system.workers[0]!.kill();
      // The attacker's moment: the deadline has passed by Redis's clock (the one that judges it).
      await waitUntil(async () => (await redisNow(redis)) > deadline + 300, 15_000);

      const { request_id: id } = request;
      const doors: Record<string, () => Promise<DoorAnswer>> = {
        rest: async () => {
          const res = await api(system.url, 'POST', `/hitl/${encodeURIComponent(id)}`, { apiKey: TEST_API_KEY, body: { decision: 'approve' } });
          return { status: res.status, error_code: res.body.error_code };
        },
        socketio: async () => {
          const answer = await sendMessage(socket, 'hitl_decision', { request_id: id, decision: 'approve' });
          return { status: answer.ok ? 200 : 409, error_code: answer.error_code };
        },
        raw_websocket: async () => {
          const answer = await decideOverRawWebSocket(system.url, ack.session_id, id);
          return { status: answer.ok ? 200 : 409, error_code: answer.error_code };
        },
        ai_sdk: async () => {
          const part = { type: 'dynamic-tool', toolName: 'write_file', toolCallId: call.tool_call_id, state: 'approval-responded', input: request.action_request.args, approval: { id, approved: true } };
          const res = await post(`${system.url}/api/v1/ui/chat`, { id: ack.session_id, messages: [{ id: 'm1', role: 'assistant', parts: [part] }] });
          return { status: res.status, error_code: res.body?.error_code };
        },
        ag_ui: async () => {
          const res = await post(`${system.url}/api/v1/ag-ui`, { threadId: ack.session_id, runId: 'ag-ui-late', messages: [], tools: [], resume: [{ interruptId: id, status: 'resolved', payload: { approved: true } }] });
          return { status: res.status, error_code: res.body?.error_code };
        },
        a2a: async () => {
          const message = { messageId: 'late-approval', role: 'ROLE_USER', taskId: ack.run_id, contextId: ack.session_id, parts: [{ data: { decision: 'approve', request_id: id } }] };
          const res = await post(`${system.url}/api/v1/a2a`, { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message } });
          // JSON-RPC answers its errors with 200; DataAgent's error code travels in error.data.
          return { status: res.body?.error ? 409 : res.status, error_code: res.body?.error?.data?.error_code };
        },
        openai_responses: async () => {
          const res = await post(`${system.url}/v1/responses`, { model: 'default', previous_response_id: `resp_${ack.run_id}`, input: [{ type: 'mcp_approval_response', approval_request_id: id, approve: true }] });
          return { status: res.status, error_code: res.body?.error?.code };
        },
      };
      // One door after the other, each judged at once: a door that took the approval would go on to run the tool.
      for (const [door, decide] of Object.entries(doors)) expect({ door, ...(await decide()) }).toEqual({ door, status: 409, error_code: 'timeout' });

      // With no worker alive, the run still ends at its deadline: timeout, its call closed timeout, one done.
      // Not before its deadline (how soon after is the wait's own deadline, not an assertion on a duration).
      const done = await events.done(ack.run_id, 15_000);
      expect(done).toMatchObject({ cancelled: true, reason: 'timeout' });
      expect(Date.parse(done.timestamp)).toBeGreaterThanOrEqual(deadline);
      expect(events.ofRun(ack.run_id).find((e) => e.event_type === 'tool_result')).toMatchObject({ tool_call_id: call.tool_call_id, status: 'timeout' });
      expect((await store.runs.get(ack.run_id))?.status).toBe('timeout');
      // Its tenant slot is back (the tenant may run one at a time): the next chat is admitted at once.
      const next = await sendChat(socket, { message: '[[chunks:2]] after the expiry' });
      expect({ ok: next.ok, error_code: next.error_code }).toEqual({ ok: true, error_code: undefined });

      // A worker comes back: it runs the next chat, and the expired call never.
      await system.addWorker();
      expect((await events.done(next.run_id, 30_000)).cancelled).toBe(false);
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      expect(run.filter((e) => e.event_type === 'done')).toHaveLength(1);
      expect(run.map((e) => e.event_type)).toEqual(['run_queued', 'run_started', 'usage', 'tool_call', 'hitl_request', 'tool_result', 'done']);
      expect(await queue.jobState(ack.run_id)).toBe('unknown');
      expect(existsSync(file)).toBe(false);
      const stored = await store.events.list(ack.run_id, 0);
      expect(stored.map((e: EventDict) => e.event_type)).toEqual(run.map((e) => e.event_type));
    } finally {
      socket.disconnect();
      await store.close();
    }
  });
});

describe('parked runs expire on time with workers alive', () => {
  const RUNS = 100;
  /** The worker's slots: all of them taken by another tenant's long runs while the parked runs' deadlines pass. */
  const SLOTS = 8;
  // Tenants of their own: the tenants' run slots live in Redis, shared with the system above.
  const DAVE_KEY = 'test-key-dave';
  const CAROL_KEY = 'test-key-carol';
  let system: TestSystem;
  let redis: Redis;

  beforeAll(async () => {
    system = await TestSystem.start({
      workers: [{ DATAAGENT_WORKER_CONCURRENCY: String(SLOTS) }],
      env: {
        DATAAGENT_HITL_TIMEOUT: '5',
        DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT: String(RUNS),
        DATAAGENT_CLIENT_MESSAGES_PER_SECOND: '500',
        DATAAGENT_API_KEYS: `${DAVE_KEY}:initech:dave,${CAROL_KEY}:globex:carol`,
      },
    });
    redis = new Redis(process.env.DATAAGENT_REDIS_URL!, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    redis?.disconnect();
    await system?.stop();
  });

  it(`${RUNS} parked runs each end timeout within 5 s of their deadline, and give their tenant's slots back`, async () => {
    const socket = await connectChat(system.url, DAVE_KEY);
    const events = new EventCollector(socket);
    const carol = await connectChat(system.url, CAROL_KEY);
    const carolEvents = new EventCollector(carol);
    const store = await createConversationStore('mysql', { ...mysqlSettings(system.env), poolSize: 2 } as MysqlConfig);
    try {
      const acks = await Promise.all(Array.from({ length: RUNS }, (_, i) => sendChat(socket, { message: write(`files/parked-${i}.txt`) })));
      expect(acks.every((a) => a.ok)).toBe(true);
      const requests = await Promise.all(acks.map((a) => events.next(runEvent(a.run_id, 'hitl_request'), 60_000)));
      // The tenant is at its limit while they wait: the runs hold real slots.
      const refused = await sendChat(socket, { message: 'one too many' });
      expect(refused).toMatchObject({ ok: false, error_code: 'tenant_run_limit' });
      // Workers alive, but busy: another tenant's runs take every worker slot while the deadlines pass.
      const carols = await Promise.all(Array.from({ length: SLOTS }, () => sendChat(carol, { message: '[[chunks:1]] [[hang]]' })));
      await Promise.all(carols.map((c) => carolEvents.next(runEvent(c.run_id, 'run_started'), 30_000)));

      const dones = await Promise.all(acks.map((a) => events.done(a.run_id, 30_000)));
      const late = dones.map((done, i) => Date.parse(done.timestamp) - Date.parse(requests[i]!.expires_at ?? ''));
      // Measured from each run's own done against its own deadline: never before it, at most 5 s after.
      expect(late.filter((ms) => ms < 0 || ms > 5_000)).toEqual([]);
      for (const [i, done] of dones.entries()) {
        expect(done).toMatchObject({ cancelled: true, reason: 'timeout' });
        const run = events.ofRun(acks[i]!.run_id);
        assertWellFormedRun(run);
        expect(run.filter((e) => e.event_type === 'tool_result')).toEqual([expect.objectContaining({ status: 'timeout' })]);
      }
      const rows = await Promise.all(acks.map((a) => store.runs.get(a.run_id)));
      expect(rows.map((r) => r?.status)).toEqual(acks.map(() => 'timeout'));
      // Every slot is back: the tenant holds none, and its next chat is admitted right away.
      expect(await redis.zcard(redisKeys.tenantRuns('initech'))).toBe(0);
      const next = await sendChat(socket, { message: '[[chunks:2]] after the expiries' });
      expect({ ok: next.ok, error_code: next.error_code }).toEqual({ ok: true, error_code: undefined });
      // Carol's runs stop; the worker then runs dave's chat.
      for (const c of carols) expect(await sendMessage(carol, 'cancel', { session_id: c.session_id })).toMatchObject({ ok: true, cancelled: true });
      expect((await events.done(next.run_id, 30_000)).cancelled).toBe(false);
      expect(acks.filter((_, i) => existsSync(join(system.dataDir, 'workspaces', 'initech', 'dave', `files/parked-${i}.txt`)))).toEqual([]);
    } finally {
      socket.disconnect();
      carol.disconnect();
      await store.close();
    }
  });
});
