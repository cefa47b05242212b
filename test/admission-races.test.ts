import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import { redisKeys } from '#transport/redis-keys.js';
import { api, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat, runEvent } from './support/event-waits.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

describe('races around a session', () => {
  let system: TestSystem;
  let redis: Redis;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_MULTITASK: 'reject', DATAAGENT_HITL_TIMEOUT: '0.3', DATAAGENT_RUN_LOG_TTL: '1' }, extraGateways: [{}] });
    redis = new Redis(process.env.DATAAGENT_REDIS_URL!);
  });
  afterAll(async () => {
    redis?.disconnect();
    await system?.stop();
  });

  /** Waits until the worker has returned from the run's job: everything it writes is written. */
  async function jobFinished(runId: string): Promise<void> {
    const queue = new Queue(system.env.DATAAGENT_QUEUE_NAME!, { connection: { url: process.env.DATAAGENT_REDIS_URL } });
    try {
      const deadline = Date.now() + 30_000;
      while (!['completed', 'failed'].includes(await queue.getJobState(runId))) {
        if (Date.now() > deadline) throw new Error(`job ${runId} still ${await queue.getJobState(runId)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await queue.close();
    }
  }

  it('starts exactly one of many chats sent at once to an idle session in reject mode, across gateways', async () => {
    const second = system.extraGateways[0]!;
    for (let round = 0; round < 3; round++) {
      const { body: session } = await api(system.url, 'POST', '/sessions', { apiKey: TEST_API_KEY, body: {} });
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          api(i % 2 ? second.url : system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { session_id: session.session_id, message: '[[chunks:20]] [[slow:10]]' } }),
        ),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array(29).fill(409)]);
      expect(answers.filter((a) => a.status === 409).every((a) => a.body.error_code === 'run_in_progress')).toBe(true);
      const { body: history } = await api(system.url, 'GET', `/sessions/${session.session_id}/messages`, { apiKey: TEST_API_KEY });
      expect(history.messages.filter((m: { role: string }) => m.role === 'user')).toHaveLength(1);
    }
  });

  it('leaves no rows behind when a session is deleted during its run', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    const ack = await sendChat(socket, { message: '[[chunks:300]] [[slow:10]]' });
    await events.next(runEvent(ack.run_id, 'text'));
    const deleted = await api(system.url, 'DELETE', `/sessions/${ack.session_id}`, { apiKey: TEST_API_KEY });
    expect(deleted.status).toBe(200);
    await events.done(ack.run_id);
    socket.disconnect();
    await jobFinished(ack.run_id);

    const db = await mysql.createConnection({
      host: system.env.DATAAGENT_MYSQL_HOST,
      port: Number(system.env.DATAAGENT_MYSQL_PORT),
      user: system.env.DATAAGENT_MYSQL_USER,
      password: system.env.DATAAGENT_MYSQL_PASSWORD,
      database: system.env.DATAAGENT_MYSQL_DATABASE,
    });
    try {
      const count = async (table: string) =>
        Number(((await db.query(`SELECT COUNT(*) AS n FROM ${table} WHERE session_id = ?${table === 'sessions' ? '' : ' OR run_id = ?'}`, [ack.session_id, ack.run_id])) as [Array<{ n: number }>, unknown])[0][0].n);
      expect({
        sessions: await count('sessions'),
        messages: await count('messages'),
        runs: await count('runs'),
        run_events: await count('run_events'),
      }).toEqual({ sessions: 0, messages: 0, runs: 0, run_events: 0 });
    } finally {
      await db.end();
    }
  });

  it('answers a decision on an expired HITL request with 404, never 500', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: '[[tool:write_file {"path":"files/late.txt","content":"x"}]]' });
      const request = await events.next(runEvent(ack.run_id, 'hitl_request'));
      await events.done(ack.run_id);
      const timedOut = await api(system.url, 'POST', `/hitl/${request.request_id}`, { apiKey: TEST_API_KEY, body: { decision: 'approve' } });
      expect({ status: timedOut.status, code: timedOut.body.error_code }).toEqual({ status: 409, code: 'timeout' });
      const key = redisKeys.hitlRequest(request.request_id);
      const deadline = Date.now() + 15_000;
      while ((await redis.exists(key)) === 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(await redis.exists(key)).toBe(0);
      const expired = await api(system.url, 'POST', `/hitl/${request.request_id}`, { apiKey: TEST_API_KEY, body: { decision: 'approve_all' } });
      expect({ status: expired.status, code: expired.body.error_code }).toEqual({ status: 404, code: 'hitl_request_not_found' });
    } finally {
      socket.disconnect();
    }
  });
});
