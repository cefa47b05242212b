import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import type { EventDict } from '#core/events/execution-event.js';
// @ts-expect-error: a plain ES module without types; it starts MariaDB for the harness too.
import { startMariadb } from '../scripts/local-services.mjs';
import { api, assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat } from './support/event-waits.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

interface MariadbHandle {
  port: number;
  stop(): Promise<void>;
}

const DB = { database: 'outage', user: 'outage', password: 'outage-test-password' };
const RUNS = 20;

/** Waits until `check` resolves true, looking every 200 ms; fails after `timeoutMs`. */
async function eventually(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('MySQL stopped under load', () => {
  let dir: string;
  let mariadb: MariadbHandle;
  let system: TestSystem;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-outage-'));
    mariadb = await startMariadb({ dir, ...DB, durable: true });
    system = await TestSystem.start({
      workers: 1,
      env: { DATAAGENT_MYSQL_HOST: '127.0.0.1', DATAAGENT_MYSQL_PORT: String(mariadb.port), DATAAGENT_MYSQL_USER: DB.user, DATAAGENT_MYSQL_PASSWORD: DB.password, DATAAGENT_MYSQL_DATABASE: DB.database },
    });
  }, 120_000);
  afterAll(async () => {
    await system?.stop();
    await mariadb?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`streams ${RUNS} chats through the outage, answers new chats 503, cancels over REST, and archives every event and answer once it is back`, async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    const acks = await Promise.all(Array.from({ length: RUNS }, () => sendChat(socket, { message: '[[chunks:40]] [[slow:300]]' })));
    // Every run has started (its history was read) before the database goes.
    await Promise.all(acks.map((ack) => events.next((e) => e.run_id === ack.run_id && e.event_type === 'text')));

    await mariadb.stop();
    const refused = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { message: 'during the outage' } });
    expect({ status: refused.status, code: refused.body.error_code, retry: refused.headers.get('retry-after') }).toEqual({ status: 503, code: 'database_unavailable', retry: '5' });
    // A cancel needs no database: the session's active runs and their owners are in Redis.
    const [stopped, ...streaming] = acks;
    const cancel = await api(system.url, 'POST', `/chat/${stopped.session_id}/cancel`, { apiKey: TEST_API_KEY });
    expect({ status: cancel.status, body: cancel.body }).toEqual({ status: 200, body: { session_id: stopped.session_id, cancelled: true, run_ids: [stopped.run_id] } });
    expect((await events.done(stopped.run_id, 60_000)).cancelled).toBe(true);
    // The streams go on: their events travel through Redis.
    await Promise.all(streaming.map((ack) => events.done(ack.run_id, 60_000)));
    // The streams (12 s) ended in the outage: the database comes back once the worker has kept every run's final write for retry.
    const kept = (runId: string) => system.workers[0]!.output.some((l) => l.includes(`finish run ${runId}`) && l.includes('write kept for retry'));
    await eventually(async () => acks.every((ack) => kept(ack.run_id)), 30_000, 'every run\'s final write kept for retry');
    mariadb = await startMariadb({ dir, port: mariadb.port, ...DB, durable: true });

    const db = await mysql.createConnection({ host: '127.0.0.1', port: mariadb.port, ...DB });
    try {
      assertWellFormedRun(events.ofRun(stopped.run_id));
      await eventually(async () => {
        const [[run]] = (await db.query('SELECT status FROM runs WHERE run_id = ?', [stopped.run_id])) as [Array<{ status: string }>, unknown];
        return run.status === 'cancelled';
      }, 30_000, 'the cancelled run stored as cancelled');
      for (const ack of streaming) {
        const streamed = events.ofRun(ack.run_id);
        assertWellFormedRun(streamed);
        const answer = streamed.filter((e) => e.event_type === 'text').map((e) => e.content).join('');
        await eventually(async () => {
          const { body } = await api(system.url, 'GET', `/sessions/${ack.session_id}/messages`, { apiKey: TEST_API_KEY });
          return body.messages?.some((m: { role: string; content: string }) => m.role === 'assistant' && m.content === answer);
        }, 30_000, `the answer of run ${ack.run_id} in the history`);
        await eventually(async () => {
          const [rows] = (await db.query('SELECT events FROM run_events WHERE run_id = ? ORDER BY seq_from', [ack.run_id])) as [Array<{ events: string }>, unknown];
          const archived = rows.flatMap((r) => JSON.parse(r.events) as EventDict[]);
          const seqs = [...new Set(archived.map((e) => e.seq))].sort((a, b) => a - b);
          return JSON.stringify(seqs) === JSON.stringify(streamed.map((e) => e.seq));
        }, 30_000, `every event of run ${ack.run_id} in the archive`);
        const [[run]] = (await db.query('SELECT status FROM runs WHERE run_id = ?', [ack.run_id])) as [Array<{ status: string }>, unknown];
        expect(run.status).toBe('completed');
      }
    } finally {
      await db.end();
      socket.disconnect();
    }
    // And the system works as before.
    const after = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { message: 'after the outage' } });
    expect(after.status).toBe(200);
  }, 180_000);
});
