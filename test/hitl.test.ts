import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { redisKeys } from '#transport/redis-keys.js';
import { api, assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat, sendMessage, runEvent } from './support/event-waits.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

const write = (path: string, content = 'hello') => `[[tool:write_file {"path":"${path}","content":"${content}"}]]`;

describe('human in the loop', () => {
  let system: TestSystem;
  let workspaces: string;
  const fileOf = (path: string) => join(workspaces, 'alice', path);

  beforeAll(async () => {
    workspaces = mkdtempSync(join(tmpdir(), 'da-ws-'));
    system = await TestSystem.start({ workers: 2, env: { DATAAGENT_WORKSPACE_ROOT: join(workspaces, '{user_id}'), DATAAGENT_HITL_TIMEOUT: '20', DATAAGENT_HITL_APPROVE_ALL_SECONDS: '600' } });
  });
  afterAll(async () => {
    await system?.stop();
    rmSync(workspaces, { recursive: true, force: true });
  });

  it('runs the tool once approved over REST; a duplicate or foreign decision changes nothing', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: write('files/approved.txt') });
      const request = await events.next(runEvent(ack.run_id, 'hitl_request'));
      expect(request.action_request).toMatchObject({ name: 'write_file', args: { path: 'files/approved.txt' } });
      // DATAAGENT_HITL_TIMEOUT (20 s) from the moment it was asked: what a client counts down.
      const timeLeft = Date.parse(request.expires_at ?? '') - Date.parse(request.timestamp);
      expect(timeLeft).toBeGreaterThan(19_000);
      expect(timeLeft).toBeLessThanOrEqual(20_000);
      expect(existsSync(fileOf('files/approved.txt'))).toBe(false);

      const foreign = await api(system.url, 'POST', `/hitl/${request.request_id}`, { apiKey: OTHER_API_KEY, body: { decision: 'approve' } });
      expect(foreign.status).toBe(404);
      const ok = await api(system.url, 'POST', `/hitl/${request.request_id}`, { apiKey: TEST_API_KEY, body: { decision: 'approve' } });
      expect(ok.status).toBe(200);
      const dup = await api(system.url, 'POST', `/hitl/${request.request_id}`, { apiKey: TEST_API_KEY, body: { decision: 'reject' } });
      expect(dup.status).toBe(409);
      expect(dup.body.error_code).toBe('hitl_already_decided');

      const done = await events.done(ack.run_id);
      expect(done.cancelled).toBe(false);
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      expect(run.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'success' });
      expect(run.filter((e) => e.event_type === 'file_operation')).toHaveLength(1);
      expect(readFileSync(fileOf('files/approved.txt'), 'utf8')).toBe('hello');
    } finally {
      socket.disconnect();
    }
  });

  it('ends the run cancelled on reject, over the socket, and the tool never runs', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: write('files/rejected.txt') });
      const request = await events.next(runEvent(ack.run_id, 'hitl_request'));
      const answer = await sendMessage(socket, 'hitl_decision', { request_id: request.request_id, decision: 'reject', message: 'not now' });
      expect(answer).toMatchObject({ ok: true, accepted: true });
      const done = await events.done(ack.run_id);
      expect(done.cancelled).toBe(true);
      expect(events.ofRun(ack.run_id).find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'rejected' });
      expect(existsSync(fileOf('files/rejected.txt'))).toBe(false);
      const late = await sendMessage(socket, 'hitl_decision', { request_id: request.request_id, decision: 'approve' });
      expect(late).toMatchObject({ ok: false, error_code: 'hitl_already_decided' });
      const unknown = await sendMessage(socket, 'hitl_decision', { request_id: 'no-such-request', decision: 'approve' });
      expect(unknown).toMatchObject({ ok: false, error_code: 'hitl_request_not_found' });
    } finally {
      socket.disconnect();
    }
  });

  it('approve_all approves the rest of the session without asking again', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const first = await sendChat(socket, { message: write('files/all-1.txt') });
      const request = await events.next(runEvent(first.run_id, 'hitl_request'));
      await sendMessage(socket, 'hitl_decision', { request_id: request.request_id, decision: 'approve_all' });
      expect((await events.done(first.run_id)).cancelled).toBe(false);
      const second = await sendChat(socket, { message: write('files/all-2.txt'), session_id: first.session_id });
      expect((await events.done(second.run_id)).cancelled).toBe(false);
      expect(events.ofRun(second.run_id).some((e) => e.event_type === 'hitl_request')).toBe(false);
      expect(existsSync(fileOf('files/all-2.txt'))).toBe(true);
      // It lasts DATAAGENT_HITL_APPROVE_ALL_SECONDS: neither the approval wait nor the session timeout.
      const redis = new Redis(process.env.DATAAGENT_REDIS_URL!);
      const ttl = await redis.ttl(redisKeys.sessionApproveAll(first.session_id)).finally(() => redis.disconnect());
      expect(ttl).toBeGreaterThan(20);
      expect(ttl).toBeLessThanOrEqual(600);
    } finally {
      socket.disconnect();
    }
  });

  it('keeps 50 runs waiting for approval while other runs on the same workers stream', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const waiting = await Promise.all(Array.from({ length: 50 }, (_, i) => sendChat(socket, { message: write(`files/wait-${i}.txt`) })));
      const requests = await Promise.all(waiting.map((w) => events.next(runEvent(w.run_id, 'hitl_request'))));
      const streaming = await Promise.all(Array.from({ length: 10 }, () => sendChat(socket, { message: '[[chunks:30]]' })));
      for (const s of streaming) expect((await events.done(s.run_id)).cancelled).toBe(false);
      expect(waiting.every((w) => !events.ofRun(w.run_id).some((e) => e.event_type === 'done'))).toBe(true);
      await Promise.all(requests.map((r) => api(system.url, 'POST', `/hitl/${r.request_id}`, { apiKey: TEST_API_KEY, body: { decision: 'approve' } })));
      for (const w of waiting) {
        expect((await events.done(w.run_id)).cancelled).toBe(false);
        assertWellFormedRun(events.ofRun(w.run_id));
      }
      expect(existsSync(fileOf('files/wait-49.txt'))).toBe(true);
    } finally {
      socket.disconnect();
    }
  });
});

describe('human in the loop: timeout', () => {
  let system: TestSystem;
  let workspaces: string;

  beforeAll(async () => {
    workspaces = mkdtempSync(join(tmpdir(), 'da-ws-'));
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_WORKSPACE_ROOT: join(workspaces, '{user_id}'), DATAAGENT_HITL_TIMEOUT: '0.5' } });
  });
  afterAll(async () => {
    await system?.stop();
    rmSync(workspaces, { recursive: true, force: true });
  });

  it('ends the run timeout when nobody decides in time, and a late decision is refused', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: write('files/late.txt') });
      const request = await events.next(runEvent(ack.run_id, 'hitl_request'));
      const done = await events.done(ack.run_id);
      expect(done).toMatchObject({ cancelled: true, reason: 'timeout' });
      expect(events.ofRun(ack.run_id).find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'timeout' });
      const late = await api(system.url, 'POST', `/hitl/${request.request_id}`, { apiKey: TEST_API_KEY, body: { decision: 'approve' } });
      expect({ status: late.status, code: late.body.error_code }).toEqual({ status: 409, code: 'timeout' });
      expect(late.body.details.status).toBe('timeout');
      expect(existsSync(join(workspaces, 'alice', 'files/late.txt'))).toBe(false);
    } finally {
      socket.disconnect();
    }
  });
});
