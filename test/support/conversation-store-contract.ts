import { randomBytes, randomUUID } from 'node:crypto';
import type { EventDict, UsageEventDict } from '#core/events/execution-event.js';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import { hashApiKey, issueApiKey, type ApiKeyRecord } from '#core/auth/managed-api-keys.js';
import { toolSchemaVersion, type McpCatalogTool } from '#core/mcp/mcp-catalog-store.js';
import { SecretKeyRequiredError } from '#core/mcp/mcp-secrets.js';
import type { ToolCallRecord } from '#core/mcp/tool-call-audit.js';
import { McpServerExistsError, McpServerLimitError } from '#core/mcp/mcp-server-store.js';
import { MemoryNoteError } from '#core/memory/memory-store.js';
import { SecretCipher } from '#core/secrets/secret-cipher.js';
import type { ConversationStore, NewMessage, RunRecord } from '#core/session/session-store.js';
import { formatPico } from '#core/usage/money.js';

/**
 * Opens an empty store whose timestamps come from `now`, encrypting MCP servers' secret
 * values with `cipher` (none: such servers are refused).
 */
export type OpenStore = (now: () => Date, cipher?: SecretCipher) => Promise<ConversationStore>;

const START = Date.parse('2030-01-01T00:00:00.000Z');

function textEvent(runId: string, seq: number, content = `chunk ${seq}`): EventDict {
  return {
    event_type: 'text',
    timestamp: new Date(START + seq).toISOString(),
    session_id: `session-of-${runId}`,
    run_id: runId,
    seq,
    content,
    is_final: false,
  };
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

function events(runId: string, from: number, to: number): EventDict[] {
  return range(from, to).map((seq) => textEvent(runId, seq));
}

/**
 * The behaviour every ConversationStore must have. Each implementation's test file calls this,
 * so the memory store and the MySQL store are held to one contract.
 */
export function conversationStoreContract(open: OpenStore): void {
  let store: ConversationStore;
  let clock: number;
  const now = () => new Date(clock);
  const advance = (ms: number) => (clock += ms);
  // Unique ids per test, so a shared database never mixes tests.
  let tenant: string;
  const cipher = new SecretCipher(randomBytes(32));

  beforeEach(async () => {
    clock = START;
    tenant = `tenant-${randomUUID()}`;
    store = await open(now, cipher);
  });

  afterEach(async () => {
    await store.close();
  });

  const newSession = (userId = 'alice', assistantId = 'helper') =>
    store.sessions.create({ tenantId: tenant, userId, assistantId });

  const newRun = async (sessionId: string, runId: string = randomUUID()): Promise<RunRecord> =>
    store.runs.create({ runId, sessionId, tenantId: tenant, userId: 'alice', assistantId: 'helper' });

  describe('sessions', () => {
    it('creates a session with defaults and reads it back', async () => {
      const created = await newSession();
      expect(created).toEqual({
        sessionId: expect.any(String),
        tenantId: tenant,
        userId: 'alice',
        assistantId: 'helper',
        title: '',
        metadata: {},
        createdAt: new Date(START),
        updatedAt: new Date(START),
        lastActiveAt: new Date(START),
      });
      expect(await store.sessions.get(created.sessionId)).toEqual(created);
      expect(await store.sessions.get(randomUUID())).toBeNull();
    });

    it('keeps a given id, title and nested unicode metadata', async () => {
      const metadata = { source: 'web', tags: ['a', 'b'], nested: { emoji: '🎉 naïve 漢字', n: 1.5, ok: true, none: null } };
      const sessionId = randomUUID();
      await store.sessions.create({ sessionId, tenantId: tenant, userId: 'alice', assistantId: 'helper', title: 'Quarterly 📈', metadata });
      expect(await store.sessions.get(sessionId)).toMatchObject({ sessionId, title: 'Quarterly 📈', metadata });
    });

    it('updates only the given fields and moves updatedAt', async () => {
      const s = await store.sessions.create({ tenantId: tenant, userId: 'alice', assistantId: 'helper', title: 'old', metadata: { a: 1 } });
      advance(5_000);
      const renamed = await store.sessions.update(s.sessionId, { title: 'new' });
      expect(renamed).toMatchObject({ title: 'new', metadata: { a: 1 }, createdAt: s.createdAt, updatedAt: now(), lastActiveAt: s.lastActiveAt });
      advance(1_000);
      const touched = await store.sessions.update(s.sessionId, { lastActiveAt: now(), metadata: { b: 2 } });
      expect(touched).toMatchObject({ title: 'new', metadata: { b: 2 }, lastActiveAt: now() });
      expect(await store.sessions.get(s.sessionId)).toEqual(touched);
      expect(await store.sessions.update(randomUUID(), { title: 'x' })).toBeNull();
    });

    it('lists a user\'s sessions, most recently active first, page by page', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        advance(1_000);
        ids.push((await newSession('alice')).sessionId);
      }
      await newSession('bob');
      await store.sessions.create({ tenantId: `${tenant}-other`, userId: 'alice', assistantId: 'helper' });
      // Touching the oldest makes it the most recent.
      advance(1_000);
      await store.sessions.update(ids[0], { lastActiveAt: now() });
      const expected = [ids[0], ...ids.slice(1).reverse()];

      const pages = [];
      for (let offset = 0; offset < 10; offset += 3) {
        pages.push(...(await store.sessions.listByUser(tenant, 'alice', { limit: 3, offset })));
      }
      expect(pages.map((s) => s.sessionId)).toEqual(expected);
      expect(await store.sessions.listByUser(tenant, 'alice', { limit: 0, offset: 0 })).toEqual([]);
      expect(await store.sessions.listByUser(tenant, 'nobody', { limit: 10, offset: 0 })).toEqual([]);
    });

    it('treats ids as case-sensitive, so "Bob" never sees "bob"', async () => {
      await newSession('bob');
      expect(await store.sessions.listByUser(tenant, 'Bob', { limit: 10, offset: 0 })).toEqual([]);
      expect(await store.sessions.listByUser(tenant.toUpperCase(), 'bob', { limit: 10, offset: 0 })).toEqual([]);
      expect(await store.sessions.listByUser(tenant, 'bob', { limit: 10, offset: 0 })).toHaveLength(1);
    });

    it('lists an assistant\'s sessions across users, most recently active first', async () => {
      const a = await newSession('alice', 'sql');
      advance(1_000);
      const b = await newSession('bob', 'sql');
      await newSession('carol', 'other');
      const found = await store.sessions.listByAssistant(tenant, 'sql', { limit: 10, offset: 0 });
      expect(found.map((s) => s.sessionId)).toEqual([b.sessionId, a.sessionId]);
      expect((await store.sessions.listByAssistant(tenant, 'sql', { limit: 1, offset: 1 })).map((s) => s.sessionId)).toEqual([a.sessionId]);
    });

    it('deletes a session with its messages, runs and run events, and nothing else', async () => {
      const doomed = await newSession();
      const kept = await newSession();
      for (const s of [doomed, kept]) {
        const run = await newRun(s.sessionId);
        await store.messages.append([{ sessionId: s.sessionId, runId: run.runId, role: 'user', content: 'hi', metadata: {} }]);
        await store.events.appendBatch(run.runId, events(run.runId, 1, 3));
      }
      const [doomedRun] = await store.runs.listActive(doomed.sessionId);
      const [keptRun] = await store.runs.listActive(kept.sessionId);

      expect(await store.sessions.delete(doomed.sessionId)).toBe(true);
      expect(await store.sessions.get(doomed.sessionId)).toBeNull();
      expect(await store.messages.count(doomed.sessionId)).toBe(0);
      expect(await store.runs.get(doomedRun.runId)).toBeNull();
      expect(await store.events.list(doomedRun.runId, 0)).toEqual([]);

      expect(await store.messages.count(kept.sessionId)).toBe(1);
      expect(await store.runs.get(keptRun.runId)).not.toBeNull();
      expect(await store.events.list(keptRun.runId, 0)).toHaveLength(3);
      expect(await store.sessions.delete(doomed.sessionId)).toBe(false);
    });

    it('cleans up sessions idle longer than the timeout, with their history', async () => {
      const idle = await newSession();
      await store.messages.append([{ sessionId: idle.sessionId, runId: null, role: 'user', content: 'old', metadata: {} }]);
      const idleRun = await newRun(idle.sessionId);
      await store.events.appendBatch(idleRun.runId, events(idleRun.runId, 1, 2));
      advance(50 * 60_000);
      const recent = await newSession();
      const touched = await newSession();
      advance(20 * 60_000);
      await store.sessions.update(touched.sessionId, { lastActiveAt: now() });

      // idle: 70 min, recent: 20 min, touched: 0 min.
      expect(await store.sessions.cleanupExpired(3600)).toEqual({ removed: 1, owners: [{ tenantId: idle.tenantId, userId: idle.userId }] });
      expect(await store.sessions.get(idle.sessionId)).toBeNull();
      expect(await store.messages.count(idle.sessionId)).toBe(0);
      expect(await store.runs.get(idleRun.runId)).toBeNull();
      expect(await store.events.list(idleRun.runId, 0)).toEqual([]);
      expect(await store.sessions.get(recent.sessionId)).not.toBeNull();
      expect(await store.sessions.get(touched.sessionId)).not.toBeNull();
      expect(await store.sessions.cleanupExpired(3600)).toEqual({ removed: 0, owners: [] });

      // Exactly the timeout is not yet expired; one millisecond more is.
      advance(60 * 60_000);
      expect((await store.sessions.cleanupExpired(3600)).removed).toBe(1);
      advance(1);
      expect((await store.sessions.cleanupExpired(3600)).removed).toBe(1);
    });

    it('cleans up ephemeral sessions sooner, once no run of theirs goes on, and keeps one marked to stay', async () => {
      const ephemeral = () => store.sessions.create({ tenantId: tenant, userId: 'alice', assistantId: 'helper', ephemeral: true });
      const done = await ephemeral();
      const doneRun = await newRun(done.sessionId);
      await store.runs.markStarted(doneRun.runId);
      await store.runs.markFinished(doneRun.runId, 'completed');
      const busy = await ephemeral();
      const busyRun = await newRun(busy.sessionId);
      const kept = await ephemeral();
      await store.sessions.update(kept.sessionId, { ephemeral: false });
      const ordinary = await newSession();
      expect((await store.sessions.get(done.sessionId))!.ephemeral).toBe(true);
      expect((await store.sessions.get(kept.sessionId))!.ephemeral).toBeFalsy();
      advance(60_000);

      // 60 s idle: past an ephemeral timeout of 30 s, well within the session timeout of an hour.
      expect(await store.sessions.cleanupExpired(3600, 30)).toEqual({ removed: 1, owners: [{ tenantId: tenant, userId: 'alice' }] });
      expect(await store.sessions.get(done.sessionId)).toBeNull();
      expect(await store.sessions.get(busy.sessionId)).not.toBeNull();
      expect(await store.sessions.get(kept.sessionId)).not.toBeNull();
      expect(await store.sessions.get(ordinary.sessionId)).not.toBeNull();
      // Without an ephemeral timeout only the session timeout applies.
      await store.runs.markStarted(busyRun.runId);
      await store.runs.markFinished(busyRun.runId, 'completed');
      expect((await store.sessions.cleanupExpired(3600)).removed).toBe(0);
      expect((await store.sessions.cleanupExpired(3600, 30)).removed).toBe(1);
      expect(await store.sessions.get(busy.sessionId)).toBeNull();
    });
  });

  describe('messages', () => {
    it('stores metadata holding a lone surrogate (a model can write one in tool arguments)', async () => {
      const s = await newSession();
      await store.messages.append([{ sessionId: s.sessionId, runId: null, role: 'tool', content: 'x\ud800', metadata: { name: 'read_file', args: { path: 'files/\ud800' } } }]);
      const [stored] = await store.messages.list(s.sessionId, { limit: 10, offset: 0 });
      expect(String((stored.metadata.args as { path: string }).path)).toMatch(/^files\/(\ud800|\ufffd)$/);
    });

    it('returns history oldest first, exactly in append order within one millisecond', async () => {
      const s = await newSession();
      const appended: string[] = [];
      // The clock does not move: every message shares one timestamp.
      for (let batch = 0; batch < 12; batch++) {
        const size = 1 + (batch % 5);
        const input: NewMessage[] = range(1, size).map((i) => ({
          sessionId: s.sessionId,
          runId: null,
          role: i % 2 ? 'user' : 'assistant',
          content: `m${appended.length + i - 1}`,
          metadata: {},
        }));
        appended.push(...input.map((m) => m.content));
        const stored = await store.messages.append(input);
        expect(stored.map((m) => m.content)).toEqual(input.map((m) => m.content));
      }
      const all = await store.messages.list(s.sessionId, { limit: 1_000, offset: 0 });
      expect(all.map((m) => m.content)).toEqual(appended);
      expect(new Set(all.map((m) => m.messageId)).size).toBe(appended.length);
      expect(await store.messages.count(s.sessionId)).toBe(appended.length);

      const paged = [];
      for (let offset = 0; offset < appended.length; offset += 7) {
        paged.push(...(await store.messages.list(s.sessionId, { limit: 7, offset })));
      }
      expect(paged).toEqual(all);
      expect(await store.messages.list(s.sessionId, { limit: 5, offset: appended.length })).toEqual([]);
    });

    it('keeps each append together when appends to one session race', async () => {
      const s = await newSession();
      await Promise.all(
        range(0, 9).map((call) =>
          store.messages.append(
            range(0, 4).map((i) => ({ sessionId: s.sessionId, runId: null, role: 'tool' as const, content: `${call}:${i}`, metadata: {} })),
          ),
        ),
      );
      const all = (await store.messages.list(s.sessionId, { limit: 100, offset: 0 })).map((m) => m.content);
      expect(all).toHaveLength(50);
      for (let block = 0; block < 10; block++) {
        const call = all[block * 5].split(':')[0];
        expect(all.slice(block * 5, block * 5 + 5)).toEqual(range(0, 4).map((i) => `${call}:${i}`));
      }
    });

    it('round-trips roles, run ids, tool metadata, unicode and large content', async () => {
      const s = await newSession();
      const run = await newRun(s.sessionId);
      const big = 'x'.repeat(200_000);
      const toolCalls = [{ id: 'call_1', name: 'sql', arguments: { query: 'select 1', limit: 5 } }];
      const input: NewMessage[] = [
        { sessionId: s.sessionId, runId: null, role: 'system', content: 'be brief', metadata: {} },
        { sessionId: s.sessionId, runId: run.runId, role: 'user', content: 'héllo 👋 世界', metadata: {} },
        { sessionId: s.sessionId, runId: run.runId, role: 'assistant', content: '', metadata: { toolCalls } },
        { sessionId: s.sessionId, runId: run.runId, role: 'tool', content: big, metadata: { name: 'sql', toolCallId: 'call_1' } },
      ];
      const stored = await store.messages.append(input);
      expect(stored.every((m) => m.createdAt.getTime() === START)).toBe(true);
      const listed = await store.messages.list(s.sessionId, { limit: 10, offset: 0 });
      expect(listed).toEqual(stored);
      expect(listed.map(({ role, runId, content, metadata }) => ({ role, runId, content, metadata }))).toEqual(
        input.map(({ role, runId, content, metadata }) => ({ role, runId, content, metadata })),
      );
    });

    it('keeps a given message id and time, and separates sessions', async () => {
      const a = await newSession();
      const b = await newSession();
      const messageId = randomUUID();
      const createdAt = new Date(START - 60_000);
      const [stored] = await store.messages.append([{ messageId, createdAt, sessionId: a.sessionId, runId: null, role: 'user', content: 'a', metadata: {} }]);
      expect(stored).toMatchObject({ messageId, createdAt });
      await store.messages.append([{ sessionId: b.sessionId, runId: null, role: 'user', content: 'b', metadata: {} }]);
      expect((await store.messages.list(a.sessionId, { limit: 10, offset: 0 })).map((m) => m.content)).toEqual(['a']);
      expect(await store.messages.count(b.sessionId)).toBe(1);
      expect(await store.messages.append([])).toEqual([]);
    });
  });

  describe('runs', () => {
    it('creates a queued run and starts it once', async () => {
      const s = await newSession();
      const run = await newRun(s.sessionId, 'run-1-' + tenant);
      expect(run).toEqual({
        runId: 'run-1-' + tenant,
        sessionId: s.sessionId,
        tenantId: tenant,
        userId: 'alice',
        assistantId: 'helper',
        status: 'queued',
        error: null,
        createdAt: new Date(START),
        startedAt: null,
        finishedAt: null,
      });
      expect(await store.runs.get(run.runId)).toEqual(run);
      expect(await store.runs.get('no-such-run')).toBeNull();

      advance(100);
      await store.runs.markStarted(run.runId);
      const started = await store.runs.get(run.runId);
      expect(started).toMatchObject({ status: 'running', startedAt: now() });
      // A retried job starts again: the first start time stays.
      advance(100);
      await store.runs.markStarted(run.runId);
      expect(await store.runs.get(run.runId)).toEqual(started);
    });

    it('finishes a run once: a cancelled run never turns completed', async () => {
      const s = await newSession();
      const run = await newRun(s.sessionId);
      await store.runs.markStarted(run.runId);
      advance(500);
      expect(await store.runs.markFinished(run.runId, 'cancelled')).toBe(true);
      advance(500);
      expect(await store.runs.markFinished(run.runId, 'completed')).toBe(false);
      expect(await store.runs.markFinished(run.runId, 'failed', 'late error')).toBe(false);
      await store.runs.markStarted(run.runId);
      expect(await store.runs.get(run.runId)).toMatchObject({ status: 'cancelled', error: null, finishedAt: new Date(START + 500) });
      expect(await store.runs.markFinished('no-such-run', 'completed')).toBe(false);
    });

    it('finishes a queued run directly and keeps the error of a failed one', async () => {
      const s = await newSession();
      const queued = await newRun(s.sessionId);
      expect(await store.runs.markFinished(queued.runId, 'cancelled')).toBe(true);
      expect(await store.runs.get(queued.runId)).toMatchObject({ status: 'cancelled', startedAt: null });
      const failing = await newRun(s.sessionId);
      await store.runs.markStarted(failing.runId);
      expect(await store.runs.markFinished(failing.runId, 'failed', 'model timed out ⏱')).toBe(true);
      expect(await store.runs.get(failing.runId)).toMatchObject({ status: 'failed', error: 'model timed out ⏱' });
    });

    it("moves a row only along the state table's edges, from the states a writer names", async () => {
      const s = await newSession();
      const run = await newRun(s.sessionId);
      // queued → completed is no move of the table: a run completes only once it ran.
      expect(await store.runs.markFinished(run.runId, 'completed')).toBe(false);
      expect(await store.runs.markWaiting(run.runId)).toBe(false);
      expect((await store.runs.get(run.runId))?.status).toBe('queued');
      // A writer that names where it moves from: a queued run is not cancelled as a parked one.
      expect(await store.runs.markFinished(run.runId, 'cancelled', undefined, ['waiting'])).toBe(false);
      await store.runs.markStarted(run.runId);
      expect(await store.runs.markWaiting(run.runId)).toBe(true);
      expect(await store.runs.markFinished(run.runId, 'timeout', undefined, ['waiting'])).toBe(true);
      expect((await store.runs.get(run.runId))?.status).toBe('timeout');
    });

    it('lets exactly one of two racing finishes win', async () => {
      const s = await newSession();
      const run = await newRun(s.sessionId);
      await store.runs.markStarted(run.runId);
      const [completed, cancelled] = await Promise.all([
        store.runs.markFinished(run.runId, 'completed'),
        store.runs.markFinished(run.runId, 'cancelled'),
      ]);
      expect([completed, cancelled].filter(Boolean)).toHaveLength(1);
      expect((await store.runs.get(run.runId))?.status).toBe(completed ? 'completed' : 'cancelled');
    });

    it('lists a session\'s queued and running runs, oldest first', async () => {
      const s = await newSession();
      const other = await newSession();
      // Same millisecond: creation order still decides.
      const runs = [];
      for (let i = 0; i < 5; i++) runs.push(await newRun(s.sessionId));
      await newRun(other.sessionId);
      await store.runs.markStarted(runs[1].runId);
      await store.runs.markStarted(runs[2].runId);
      await store.runs.markFinished(runs[2].runId, 'completed');
      await store.runs.markFinished(runs[4].runId, 'failed', 'x');
      const active = await store.runs.listActive(s.sessionId);
      expect(active.map((r) => [r.runId, r.status])).toEqual([
        [runs[0].runId, 'queued'],
        [runs[1].runId, 'running'],
        [runs[3].runId, 'queued'],
      ]);
    });

    it('lists the runs still queued or running that were created before a time, oldest first', async () => {
      const s = await newSession();
      const old = await newRun(s.sessionId);
      advance(10);
      const running = await newRun(s.sessionId);
      await store.runs.markStarted(running.runId);
      const done = await newRun(s.sessionId);
      await store.runs.markStarted(done.runId);
      await store.runs.markFinished(done.runId, 'completed');
      advance(10);
      const fresh = await newRun(s.sessionId);
      const stale = await store.runs.listStale(new Date(clock - 5), 10);
      expect(stale.map((r) => r.runId).filter((id) => [old.runId, running.runId, done.runId, fresh.runId].includes(id))).toEqual([old.runId, running.runId]);
      expect(await store.runs.listStale(new Date(clock - 5), 1)).toHaveLength(1);
    });

    it('purges the rows a run wrote after its session was deleted, and only then', async () => {
      const s = await newSession();
      const run = await newRun(s.sessionId);
      const write = async () => {
        await store.messages.append([{ sessionId: s.sessionId, runId: run.runId, role: 'assistant', content: 'late answer', metadata: {} }]);
        await store.events.appendBatch(run.runId, [{ event_type: 'done', timestamp: now().toISOString(), session_id: s.sessionId, run_id: run.runId, seq: 1, cancelled: true }]);
      };
      await write();
      expect(await store.runs.purgeIfOrphaned(run.runId, s.sessionId)).toBe(false);
      expect(await store.messages.count(s.sessionId)).toBe(1);

      await store.sessions.delete(s.sessionId);
      // The run was still writing: its rows land after the session's delete.
      await newRun(s.sessionId, run.runId);
      await write();
      expect(await store.runs.purgeIfOrphaned(run.runId, s.sessionId)).toBe(true);
      expect(await store.runs.get(run.runId)).toBeNull();
      expect(await store.messages.count(s.sessionId)).toBe(0);
      expect(await store.events.list(run.runId, 0)).toEqual([]);
    });
  });

  describe('submissions', () => {
    const run = (sessionId: string, runId = randomUUID()) => ({ runId, sessionId, tenantId: tenant, userId: 'alice', assistantId: 'helper' });
    const message = (sessionId: string, runId: string | null, content: string, role: NewMessage['role'] = 'user'): NewMessage => ({ sessionId, runId, role, content, metadata: {} });

    it('writes many turns at once: new sessions, runs, messages in order, and touches continued sessions', async () => {
      const existing = await newSession();
      advance(1_000);
      const fresh = randomUUID();
      const [a, b] = [run(fresh), run(existing.sessionId)];
      await store.submissions.writeMany([
        { session: { sessionId: fresh, tenantId: tenant, userId: 'alice', assistantId: 'helper', title: 'first' }, run: a, messages: [message(fresh, null, 'before', 'assistant'), message(fresh, a.runId, 'hello')] },
        { touchSessionId: existing.sessionId, run: b, messages: [message(existing.sessionId, b.runId, 'again')] },
      ]);
      expect(await store.sessions.get(fresh)).toMatchObject({ title: 'first', userId: 'alice' });
      expect((await store.sessions.get(existing.sessionId))!.lastActiveAt.getTime()).toBe(START + 1_000);
      expect(await store.runs.get(a.runId)).toMatchObject({ status: 'queued', sessionId: fresh });
      expect((await store.runs.listActive(existing.sessionId)).map((r) => r.runId)).toEqual([b.runId]);
      expect((await store.messages.list(fresh, { limit: 10, offset: 0 })).map((m) => [m.role, m.content, m.runId])).toEqual([
        ['assistant', 'before', null],
        ['user', 'hello', a.runId],
      ]);
      expect((await store.messages.list(existing.sessionId, { limit: 10, offset: 0 })).map((m) => m.content)).toEqual(['again']);
    });

    it('writes all of a batch or none of it', async () => {
      const taken = await newSession();
      const fresh = randomUUID();
      const ok = run(fresh);
      await expect(
        store.submissions.writeMany([
          { session: { sessionId: fresh, tenantId: tenant, userId: 'alice', assistantId: 'helper' }, run: ok, messages: [message(fresh, ok.runId, 'hi')] },
          { session: { sessionId: taken.sessionId, tenantId: tenant, userId: 'alice', assistantId: 'helper' }, run: run(taken.sessionId), messages: [] },
        ]),
      ).rejects.toThrow();
      expect(await store.sessions.get(fresh)).toBeNull();
      expect(await store.runs.get(ok.runId)).toBeNull();
      expect(await store.messages.count(fresh)).toBe(0);
    });

    /** Queued runs of new sessions, written as the gateway writes them. */
    async function queuedTurns(n: number): Promise<Array<ReturnType<typeof run>>> {
      const runs = Array.from({ length: n }, () => run(randomUUID()));
      await store.submissions.writeMany(runs.map((r) => ({ session: { sessionId: r.sessionId, tenantId: tenant, userId: 'alice', assistantId: 'helper' }, run: r, messages: [message(r.sessionId, r.runId, 'q')] })));
      return runs;
    }

    it('starts many runs at once, keeping the first start time and leaving finished runs finished', async () => {
      const [a, b, done] = await queuedTurns(3);
      await store.runs.markFinished(done!.runId, 'cancelled', 'cancelled while queued');
      advance(1_000);
      await store.submissions.startMany([a!.runId, b!.runId, done!.runId]);
      advance(1_000);
      await store.submissions.startMany([a!.runId]);
      expect(await store.runs.get(a!.runId)).toMatchObject({ status: 'running', startedAt: new Date(START + 1_000) });
      expect(await store.runs.get(b!.runId)).toMatchObject({ status: 'running' });
      expect(await store.runs.get(done!.runId)).toMatchObject({ status: 'cancelled', startedAt: null });
    });

    it('ends many runs at once: their messages in order, each status unless it had one, and their sessions touched', async () => {
      const [ok, broken, cancelled, over] = await queuedTurns(4);
      await store.runs.markStarted(ok!.runId);
      await store.runs.markFinished(over!.runId, 'cancelled');
      advance(5_000);
      await store.submissions.finishMany([
        { runId: ok!.runId, sessionId: ok!.sessionId, status: 'completed', messages: [message(ok!.sessionId, ok!.runId, 'calling', 'assistant'), message(ok!.sessionId, ok!.runId, 'answer', 'assistant')] },
        { runId: broken!.runId, sessionId: broken!.sessionId, status: 'failed', error: 'model down', messages: [] },
        { runId: cancelled!.runId, sessionId: cancelled!.sessionId, status: 'cancelled', messages: [] },
        { runId: over!.runId, sessionId: over!.sessionId, status: 'completed', messages: [] },
      ]);
      expect(await store.runs.get(ok!.runId)).toMatchObject({ status: 'completed', error: null, finishedAt: new Date(START + 5_000) });
      expect(await store.runs.get(broken!.runId)).toMatchObject({ status: 'failed', error: 'model down' });
      expect(await store.runs.get(cancelled!.runId)).toMatchObject({ status: 'cancelled' });
      expect(await store.runs.get(over!.runId)).toMatchObject({ status: 'cancelled' });
      expect((await store.messages.list(ok!.sessionId, { limit: 10, offset: 0 })).map((m) => m.content)).toEqual(['q', 'calling', 'answer']);
      expect((await store.sessions.get(broken!.sessionId))!.lastActiveAt.getTime()).toBe(START + 5_000);
    });

    it('ends all of a batch of runs or none of it', async () => {
      const [first, second] = await queuedTurns(2);
      const stored = { ...message(first!.sessionId, first!.runId, 'stored', 'assistant'), messageId: randomUUID() };
      await store.messages.append([stored]);
      await expect(
        store.submissions.finishMany([
          { runId: second!.runId, sessionId: second!.sessionId, status: 'completed', messages: [message(second!.sessionId, second!.runId, 'new', 'assistant')] },
          { runId: first!.runId, sessionId: first!.sessionId, status: 'completed', messages: [stored] },
        ]),
      ).rejects.toThrow();
      expect(await store.runs.get(second!.runId)).toMatchObject({ status: 'queued' });
      expect(await store.messages.count(second!.sessionId)).toBe(1);
    });
  });

  describe('run events', () => {
    it('lists events after a seq, in order', async () => {
      const runId = randomUUID();
      const { timestamp, session_id } = textEvent(runId, 3);
      const toolCall: EventDict = { event_type: 'tool_call', timestamp, session_id, run_id: runId, seq: 3, tool_name: 'sql', tool_args: { q: 'ü 😀' }, tool_call_id: 'c1' };
      const batch = [textEvent(runId, 1), textEvent(runId, 2), toolCall, textEvent(runId, 4)];
      await store.events.appendBatch(runId, batch);
      expect(await store.events.list(runId, 0)).toEqual(batch);
      expect(await store.events.list(runId, 2)).toEqual(batch.slice(2));
      expect(await store.events.list(runId, 4)).toEqual([]);
      expect(await store.events.list(randomUUID(), 0)).toEqual([]);
      await store.events.appendBatch(runId, []);
      expect(await store.events.list(runId, 0)).toHaveLength(4);
    });

    it('keeps many batches in seq order and resumes from any seq', async () => {
      const runId = randomUUID();
      for (let b = 0; b < 40; b++) await store.events.appendBatch(runId, events(runId, b * 25 + 1, b * 25 + 25));
      const all = await store.events.list(runId, 0);
      expect(all.map((e) => e.seq)).toEqual(range(1, 1_000));
      expect((await store.events.list(runId, 537)).map((e) => e.seq)).toEqual(range(538, 1_000));
    });

    it('stores a retried, overlapping batch only once', async () => {
      const runId = randomUUID();
      await store.events.appendBatch(runId, events(runId, 1, 10));
      await store.events.appendBatch(runId, events(runId, 1, 10));
      await store.events.appendBatch(runId, events(runId, 6, 15));
      await store.events.appendBatch(runId, events(runId, 3, 8));
      const all = await store.events.list(runId, 0);
      expect(all.map((e) => e.seq)).toEqual(range(1, 15));
      expect(all).toEqual(events(runId, 1, 15));
    });

    it('writes several runs in one call, skips a retried batch and reads overlaps once', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      await store.events.appendMany([
        { runId: a, events: events(a, 1, 5) },
        { runId: b, events: events(b, 1, 3) },
        { runId: randomUUID(), events: [] },
      ]);
      await store.events.appendMany([{ runId: a, events: events(a, 1, 5) }]);
      await store.events.appendMany([{ runId: a, events: events(a, 4, 9) }, { runId: b, events: events(b, 4, 4) }]);
      expect(await store.events.list(a, 0)).toEqual(events(a, 1, 9));
      expect((await store.events.list(b, 2)).map((e) => e.seq)).toEqual([3, 4]);
    });

    it('keeps the newer events of a batch that starts where a stored one starts', async () => {
      // A worker continuing a run archives its log again from seq 1, with what it added since.
      const runId = randomUUID();
      await store.events.appendMany([{ runId, events: events(runId, 1, 5) }]);
      await store.events.appendMany([{ runId, events: events(runId, 6, 8) }]);
      await store.events.appendMany([{ runId, events: events(runId, 1, 12) }]);
      await store.events.appendMany([{ runId, events: events(runId, 1, 3) }]);
      expect(await store.events.list(runId, 0)).toEqual(events(runId, 1, 12));
      expect((await store.events.list(runId, 7)).map((e) => e.seq)).toEqual(range(8, 12));
    });

    it('stores each seq once when overlapping batches race', async () => {
      const runId = randomUUID();
      await Promise.all([
        store.events.appendBatch(runId, events(runId, 1, 10)),
        store.events.appendBatch(runId, events(runId, 5, 20)),
        store.events.appendBatch(runId, events(runId, 1, 20)),
        store.events.appendBatch(runId, events(runId, 15, 30)),
      ]);
      const seqs = (await store.events.list(runId, 0)).map((e) => e.seq);
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(seqs.at(-1)).toBe(30);
    });
  });

  describe('usage', () => {
    const usageEvent = (runId: string, seq: number, fields: Partial<UsageEventDict> = {}): UsageEventDict => ({
      event_type: 'usage',
      timestamp: new Date(START + seq * 3_600_000).toISOString(),
      session_id: `session-of-${runId}`,
      run_id: runId,
      seq,
      model: 'openai:gpt-4o',
      call: seq,
      input_tokens: 1000 + seq,
      output_tokens: 100,
      cached_input_tokens: 10,
      cost: `0.${String(seq).padStart(3, '0')}000000001`,
      currency: 'USD',
      ...fields,
    });
    const done = (runId: string, seq: number): EventDict => ({ event_type: 'done', timestamp: new Date(START + seq * 3_600_000).toISOString(), session_id: `session-of-${runId}`, run_id: runId, seq, cancelled: false });
    const january = { from: '2030-01-01', to: '2030-01-31' };

    it("counts each call of a run's archived log once, however often and however it is archived again", async () => {
      const session = await newSession();
      const run = await newRun(session.sessionId);
      const log = [textEvent(run.runId, 1), usageEvent(run.runId, 2), usageEvent(run.runId, 3, { estimated: true }), textEvent(run.runId, 4)];
      await store.events.appendMany([{ runId: run.runId, events: log }]);
      // A retried flush, one run's write after a failed flush, and a worker that continues the run
      // archiving its log again from seq 1 with a call of its own (on the next day, seq 25).
      await store.events.appendMany([{ runId: run.runId, events: log }]);
      await store.events.appendBatch(run.runId, log.slice(1, 3));
      await store.events.appendMany([{ runId: run.runId, events: [...log, usageEvent(run.runId, 25, { model: 'anthropic:claude' }), done(run.runId, 26)] }]);
      const byDay = await store.usage.report({ ...january, tenantId: tenant, groupBy: 'day' });
      expect(byDay.map((l) => [l.key, l.calls, l.inputTokens, l.outputTokens, l.cachedInputTokens, formatPico(l.cost), l.estimatedCalls])).toEqual([
        ['2030-01-01', 2, 2005, 200, 20, '0.005000000002', 1],
        ['2030-01-02', 1, 1025, 100, 10, '0.025000000001', 0],
      ]);
      expect((await store.usage.report({ ...january, tenantId: tenant, groupBy: 'model' })).map((l) => [l.key, l.calls])).toEqual([
        ['anthropic:claude', 1],
        ['openai:gpt-4o', 2],
      ]);
    });

    it("takes each call's tenant, user and assistant from its run, and filters by them, by model and by dates", async () => {
      const session = await newSession();
      const alices = await newRun(session.sessionId);
      const bobs = await store.runs.create({ runId: randomUUID(), sessionId: session.sessionId, tenantId: tenant, userId: 'bob', assistantId: 'helper' });
      const elsewhere = await store.runs.create({ runId: randomUUID(), sessionId: session.sessionId, tenantId: `${tenant}-other`, userId: 'alice', assistantId: 'helper' });
      await store.events.appendMany([
        { runId: alices.runId, events: [usageEvent(alices.runId, 1), usageEvent(alices.runId, 2, { model: 'm2' })] },
        { runId: bobs.runId, events: [usageEvent(bobs.runId, 1, { cost: '1.5' })] },
        { runId: elsewhere.runId, events: [usageEvent(elsewhere.runId, 1)] },
        // No row: nobody to count it for.
        { runId: randomUUID(), events: [usageEvent('ghost', 1)] },
      ]);
      const byUser = await store.usage.report({ ...january, tenantId: tenant, groupBy: 'user' });
      expect(byUser.map((l) => [l.tenantId, l.key, l.calls, formatPico(l.cost)])).toEqual([
        [tenant, 'alice', 2, '0.003000000002'],
        [tenant, 'bob', 1, '1.500000000000'],
      ]);
      expect((await store.usage.report({ ...january, tenantId: tenant, userId: 'alice', model: 'm2', groupBy: 'day' })).map((l) => l.calls)).toEqual([1]);
      expect(await store.usage.report({ from: '2030-01-02', to: '2030-01-31', tenantId: tenant, groupBy: 'day' })).toEqual([]);
      // Operators: every tenant.
      const everyone = (await store.usage.report({ ...january, groupBy: 'user' })).filter((l) => l.tenantId?.startsWith(tenant));
      expect(everyone.map((l) => [l.tenantId, l.key])).toEqual([
        [tenant, 'alice'],
        [tenant, 'bob'],
        [`${tenant}-other`, 'alice'],
      ]);
    });

    it('keeps the price table operators set, and each change with what it replaced', async () => {
      const before = await store.prices.current();
      const first = await store.prices.replace({ prices: { '*': { input: '1', output: '2' } }, currency: 'USD', updatedAt: now(), updatedBy: 'ops/olga' });
      advance(1_000);
      const second = await store.prices.replace({ prices: { 'gpt-4o': { input: '2.5', output: '10', cached_input: '1.25' } }, currency: 'EUR', updatedAt: now(), updatedBy: 'ops/omar' });
      expect(await store.prices.current()).toEqual({ prices: { 'gpt-4o': { input: '2.5', output: '10', cached_input: '1.25' } }, currency: 'EUR', updatedAt: now(), updatedBy: 'ops/omar' });
      expect(second.before).toEqual({ prices: { '*': { input: '1', output: '2' } }, currency: 'USD' });
      expect(first.before).toEqual(before ? { prices: before.prices, currency: before.currency } : null);
      const [latest, earlier] = await store.prices.changes({ limit: 2, offset: 0 });
      expect([latest!.id, latest!.changedBy, latest!.changedAt, latest!.after.currency]).toEqual([second.id, 'ops/omar', now(), 'EUR']);
      expect([earlier!.id, earlier!.changedBy]).toEqual([first.id, 'ops/olga']);
      expect((await store.prices.changes({ limit: 1, offset: 1 })).map((c) => c.id)).toEqual([first.id]);
    });
  });

  describe('MCP servers', () => {
    const remote = (name: string, token = 'Bearer s3cr3t-token'): McpServerConfig => ({
      name,
      transport: 'streamable-http',
      url: `https://${name}.example/mcp`,
      headers: { Authorization: token },
      timeoutMs: 20_000,
      triggerKeywords: ['issues', 'pull requests'],
    });
    const local: McpServerConfig = { name: 'files', transport: 'stdio', command: 'mcp-files', args: ['--root', '/srv'], env: { TOKEN: 'ünïcode 🔑' }, disabled: true };

    it('stores a server and gives its secret values back in clear', async () => {
      const created = await store.mcpServers.create(tenant, 'alice', remote('github'));
      const expected = { tenantId: tenant, userId: 'alice', config: remote('github'), createdAt: new Date(START), updatedAt: new Date(START) };
      expect(created).toEqual(expected);
      expect(await store.mcpServers.get(tenant, 'alice', 'github')).toEqual(expected);
      await store.mcpServers.create(tenant, 'alice', local);
      expect((await store.mcpServers.get(tenant, 'alice', 'files'))?.config).toEqual(local);
      expect(await store.mcpServers.get(tenant, 'alice', 'gitlab')).toBeNull();
    });

    it('lists a user\'s servers by name, apart from other users and tenants, names case-sensitive', async () => {
      for (const name of ['zeta', 'Alpha', 'beta']) await store.mcpServers.create(tenant, 'alice', remote(name));
      await store.mcpServers.create(tenant, 'bob', remote('bobs'));
      await store.mcpServers.create(`${tenant}-other`, 'alice', remote('elsewhere'));
      expect((await store.mcpServers.list(tenant, 'alice')).map((s) => s.config.name)).toEqual(['Alpha', 'beta', 'zeta']);
      expect((await store.mcpServers.list(tenant, 'bob')).map((s) => s.config.name)).toEqual(['bobs']);
      expect(await store.mcpServers.list(tenant, 'Alice')).toEqual([]);
      expect(await store.mcpServers.get(tenant, 'alice', 'alpha')).toBeNull();
      expect(await store.mcpServers.get(tenant, 'bob', 'zeta')).toBeNull();
    });

    it('refuses a second server of one name for one user, not for another user', async () => {
      await store.mcpServers.create(tenant, 'alice', remote('github'));
      await expect(store.mcpServers.create(tenant, 'alice', remote('github', 'other'))).rejects.toBeInstanceOf(McpServerExistsError);
      await store.mcpServers.create(tenant, 'bob', remote('github', 'bobs token'));
      expect((await store.mcpServers.get(tenant, 'alice', 'github'))?.config.headers).toEqual({ Authorization: 'Bearer s3cr3t-token' });
      expect((await store.mcpServers.get(tenant, 'bob', 'github'))?.config.headers).toEqual({ Authorization: 'bobs token' });
    });

    it('refuses a server over the limit, even when creates race', async () => {
      const names = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'];
      const results = await Promise.allSettled(names.map((name) => store.mcpServers.create(tenant, 'alice', remote(name), { maxServers: 4 })));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(4);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(McpServerLimitError);
      expect(await store.mcpServers.list(tenant, 'alice')).toHaveLength(4);
      // The limit is per user.
      await store.mcpServers.create(tenant, 'bob', remote('a1'), { maxServers: 4 });
      await store.mcpServers.delete(tenant, 'alice', (await store.mcpServers.list(tenant, 'alice'))[0]!.config.name);
      await store.mcpServers.create(tenant, 'alice', remote('again'), { maxServers: 4 });
      await expect(store.mcpServers.create(tenant, 'alice', remote('more'), { maxServers: 4 })).rejects.toBeInstanceOf(McpServerLimitError);
    });

    it('replaces a server\'s config, keeps its name and creation time, and moves updatedAt', async () => {
      await store.mcpServers.create(tenant, 'alice', remote('github'));
      advance(5_000);
      const replaced = await store.mcpServers.update(tenant, 'alice', 'github', { ...local, name: 'github' });
      expect(replaced).toEqual({ tenantId: tenant, userId: 'alice', config: { ...local, name: 'github' }, createdAt: new Date(START), updatedAt: now() });
      expect(await store.mcpServers.get(tenant, 'alice', 'github')).toEqual(replaced);
      expect(await store.mcpServers.update(tenant, 'alice', 'gitlab', remote('gitlab'))).toBeNull();
      expect(await store.mcpServers.update(tenant, 'bob', 'github', remote('github'))).toBeNull();
      expect(await store.mcpServers.get(tenant, 'bob', 'github')).toBeNull();
    });

    it('deletes one user\'s server and nothing else', async () => {
      await store.mcpServers.create(tenant, 'alice', remote('github'));
      await store.mcpServers.create(tenant, 'alice', remote('gitlab'));
      await store.mcpServers.create(tenant, 'bob', remote('github'));
      expect(await store.mcpServers.delete(tenant, 'alice', 'github')).toBe(true);
      expect(await store.mcpServers.delete(tenant, 'alice', 'github')).toBe(false);
      expect((await store.mcpServers.list(tenant, 'alice')).map((s) => s.config.name)).toEqual(['gitlab']);
      expect(await store.mcpServers.get(tenant, 'bob', 'github')).not.toBeNull();
    });

    it('without a secret key, refuses secret values, naming each, and stores servers without any', async () => {
      const keyless = await open(now);
      try {
        const error = await keyless.mcpServers.create(tenant, 'alice', { ...local, env: { TOKEN: 't', OTHER: 'o' } }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SecretKeyRequiredError);
        expect((error as SecretKeyRequiredError).fields).toEqual(['env.TOKEN', 'env.OTHER']);
        expect(await keyless.mcpServers.list(tenant, 'alice')).toEqual([]);
        const plain: McpServerConfig = { name: 'public', transport: 'sse', url: 'https://public.example/sse' };
        await keyless.mcpServers.create(tenant, 'alice', plain);
        await expect(keyless.mcpServers.update(tenant, 'alice', 'public', remote('public'))).rejects.toBeInstanceOf(SecretKeyRequiredError);
        expect((await keyless.mcpServers.get(tenant, 'alice', 'public'))?.config).toEqual(plain);
      } finally {
        await keyless.close();
      }
    });
  });

  describe('MCP tool catalogs', () => {
    const echo: McpCatalogTool = { name: 'echo', description: 'Echoes', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } };
    const sum: McpCatalogTool = {
      name: 'get-sum',
      description: 'Adds',
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      outputSchema: { type: 'object', properties: { result: { type: 'number' } } },
      annotations: { readOnlyHint: true, idempotentHint: true },
    };
    const alice = () => ({ tenantId: tenant, userId: 'alice' });

    it('stores a catalog with each tool\'s schema version, and writes again only when its version moves', async () => {
      expect(await store.mcpCatalog.get(alice(), 'ev')).toBeNull();
      expect(await store.mcpCatalog.save(alice(), 'ev', { version: 'v1', partial: false, tools: [echo, sum] })).toBe(true);
      const stored = await store.mcpCatalog.get(alice(), 'ev');
      expect(stored).toEqual({
        serverName: 'ev',
        version: 'v1',
        partial: false,
        updatedAt: new Date(START),
        tools: [
          { ...echo, schemaVersion: toolSchemaVersion(echo) },
          { ...sum, schemaVersion: toolSchemaVersion(sum) },
        ],
      });
      advance(1_000);
      expect(await store.mcpCatalog.save(alice(), 'ev', { version: 'v1', partial: false, tools: [echo, sum] })).toBe(false);
      expect((await store.mcpCatalog.get(alice(), 'ev'))?.updatedAt).toEqual(new Date(START));
      expect(await store.mcpCatalog.save(alice(), 'ev', { version: 'v2', partial: true, tools: [sum] })).toBe(true);
      expect(await store.mcpCatalog.get(alice(), 'ev')).toMatchObject({ version: 'v2', partial: true, updatedAt: now(), tools: [{ name: 'get-sum' }] });
    });

    it('keeps owners and servers apart, and deletes one server\'s catalog', async () => {
      await store.mcpCatalog.save(alice(), 'ev', { version: 'a', partial: false, tools: [echo] });
      await store.mcpCatalog.save({ tenantId: tenant, userId: 'bob' }, 'ev', { version: 'b', partial: false, tools: [sum] });
      await store.mcpCatalog.save(alice(), 'other', { version: 'c', partial: false, tools: [sum] });
      expect((await store.mcpCatalog.get(alice(), 'ev'))?.tools.map((t) => t.name)).toEqual(['echo']);
      expect((await store.mcpCatalog.get({ tenantId: tenant, userId: 'bob' }, 'ev'))?.tools.map((t) => t.name)).toEqual(['get-sum']);
      expect(await store.mcpCatalog.get({ tenantId: `${tenant}-other`, userId: 'alice' }, 'ev')).toBeNull();
      await store.mcpCatalog.delete(alice(), 'ev');
      expect(await store.mcpCatalog.get(alice(), 'ev')).toBeNull();
      expect(await store.mcpCatalog.get(alice(), 'other')).not.toBeNull();
    });

    it('gives equal schemas one version whatever their key order, and another schema another', () => {
      const reordered = { ...sum, inputSchema: { required: ['a', 'b'], properties: { b: { type: 'number' }, a: { type: 'number' } }, type: 'object' } };
      expect(toolSchemaVersion(reordered)).toBe(toolSchemaVersion(sum));
      expect(toolSchemaVersion({ ...sum, outputSchema: undefined })).not.toBe(toolSchemaVersion(sum));
    });
  });

  describe('tool bindings', () => {
    it("creates, lists (oldest first) and deletes a tenant's bindings, apart from other tenants", async () => {
      const a = await store.toolBindings.create({ tenantId: tenant, agentId: 'helper', tools: ['shop.get_order', 'files.*'] });
      advance(1_000);
      const b = await store.toolBindings.create({ tenantId: tenant, apiKeyId: 'env-0123456789ab', tools: ['*'] });
      await store.toolBindings.create({ tenantId: `${tenant}-other`, agentId: 'helper', tools: ['*'] });
      expect(a).toEqual({ bindingId: expect.any(String), tenantId: tenant, agentId: 'helper', tools: ['shop.get_order', 'files.*'], createdAt: new Date(START) });
      expect(await store.toolBindings.list(tenant)).toEqual([a, b]);
      expect(await store.toolBindings.delete(`${tenant}-other`, a.bindingId)).toBe(false);
      expect(await store.toolBindings.delete(tenant, a.bindingId)).toBe(true);
      expect(await store.toolBindings.delete(tenant, a.bindingId)).toBe(false);
      expect(await store.toolBindings.list(tenant)).toEqual([b]);
    });
  });

  describe('MCP tool call audit', () => {
    const record = (over: Partial<ToolCallRecord>): ToolCallRecord => ({
      callId: randomUUID(),
      traceId: '0af7651916cd43dd8448eb211c80319c',
      tenantId: tenant,
      userId: 'alice',
      sessionId: 's1',
      runId: 'r1',
      agentId: 'helper',
      serverName: 'shop',
      toolName: 'shop.get_order',
      toolCallId: 'call_1',
      schemaVersion: '0123456789abcdef',
      validation: 'ok',
      status: 'ok',
      startedAt: new Date(START),
      endedAt: new Date(START + 12),
      durationMs: 12,
      argsBytes: 17,
      argsSha256: 'a'.repeat(64),
      resultBytes: 20,
      resultSha256: 'b'.repeat(64),
      ...over,
    });

    it('stores each call once, lists a tenant\'s newest first, filtered and paged', async () => {
      const first = record({});
      const second = record({ sessionId: 's2', toolName: 'shop.cancel_order', status: 'timeout', error: 'did not answer', startedAt: new Date(START + 1_000), endedAt: new Date(START + 6_000), durationMs: 5_000, apiKeyId: 'env-k' });
      const third = record({ status: 'denied', validation: 'not_checked', schemaVersion: '', startedAt: new Date(START + 2_000), endedAt: new Date(START + 2_000), durationMs: 0, args: { orderId: 'A-1' }, result: 'not allowed' });
      await store.toolCalls.append([first, second]);
      await store.toolCalls.append([second, third]);
      await store.toolCalls.append([record({ tenantId: `${tenant}-other` })]);
      const page = { limit: 10, offset: 0 };
      expect(await store.toolCalls.list(tenant, page)).toEqual([third, second, first]);
      expect(await store.toolCalls.list(tenant, { ...page, sessionId: 's1' })).toEqual([third, first]);
      expect(await store.toolCalls.list(tenant, { ...page, toolName: 'shop.cancel_order' })).toEqual([second]);
      expect(await store.toolCalls.list(tenant, { ...page, status: 'denied' })).toEqual([third]);
      expect(await store.toolCalls.list(tenant, { limit: 1, offset: 1 })).toEqual([second]);
    });
  });

  it('names which of some runs are still queued or running', async () => {
    const session = await newSession();
    const runs = await Promise.all([1, 2, 3].map(() => newRun(session.sessionId)));
    await store.runs.markStarted(runs[0]!.runId);
    await store.runs.markStarted(runs[2]!.runId);
    await store.runs.markFinished(runs[2]!.runId, 'completed');
    const ids = runs.map((r) => r.runId);
    expect(await store.runs.activeAmong([...ids, randomUUID()])).toEqual(new Set([ids[0], ids[1]]));
    expect(await store.runs.activeAmong([])).toEqual(new Set());
  });

  describe('issued API keys', () => {
    const record = (over: Partial<ApiKeyRecord> = {}): ApiKeyRecord => {
      const issued = issueApiKey();
      return { keyId: issued.keyId, keyHash: issued.keyHash, prefix: issued.prefix, tenantId: tenant, userId: 'alice', role: 'user', createdBy: `${tenant}/carol`, createdAt: now(), ...over };
    };

    it('finds a key by its hash only, lists a tenant\'s newest first, and revokes once', async () => {
      const first = record();
      advance(1_000);
      const second = record({ userId: 'bob', role: 'admin', expiresAt: new Date(START + 86_400_000) });
      const elsewhere = record({ tenantId: `${tenant}-other` });
      for (const r of [first, second, elsewhere]) await store.apiKeys.create(r);
      expect(await store.apiKeys.findByHash(second.keyHash)).toEqual(second);
      expect(await store.apiKeys.findByHash(hashApiKey('da_not-a-key'))).toBeNull();
      expect(await store.apiKeys.list(tenant, { limit: 10, offset: 0 })).toEqual([second, first]);
      expect((await store.apiKeys.list(undefined, { limit: 1000, offset: 0 })).map((r) => r.keyId)).toEqual(expect.arrayContaining([first.keyId, second.keyId, elsewhere.keyId]));
      advance(1_000);
      expect(await store.apiKeys.revoke(first.keyId, now())).toBe(true);
      const revokedAt = now();
      advance(1_000);
      expect(await store.apiKeys.revoke(first.keyId, now())).toBe(true);
      expect((await store.apiKeys.get(first.keyId))?.revokedAt).toEqual(revokedAt);
      expect(await store.apiKeys.revoke('no-such-key', now())).toBe(false);
      await store.apiKeys.touch(second.keyId, now());
      expect((await store.apiKeys.get(second.keyId))?.lastUsedAt).toEqual(now());
    });
  });

  describe('long-term memories', () => {
    const owner = (userId = 'alice', tenantId = tenant) => ({ tenantId, userId });
    const texts = async (o: { tenantId: string; userId: string }, assistantId = 'helper', limit = 100) => (await store.memories.recall(o, assistantId, limit)).map((n) => n.text);

    it('recalls newest first, notes of one millisecond in reverse adding order, up to the limit', async () => {
      const first = await store.memories.add(owner(), 'helper', '  Prefers metric units \n');
      expect(first).toEqual({ id: expect.any(String), text: 'Prefers metric units', createdAt: new Date(START).toISOString() });
      advance(1);
      for (const text of ['tie 1', 'tie 2', 'tie 3']) await store.memories.add(owner(), 'helper', text);
      expect(await texts(owner())).toEqual(['tie 3', 'tie 2', 'tie 1', 'Prefers metric units']);
      expect(await texts(owner(), 'helper', 2)).toEqual(['tie 3', 'tie 2']);
      // An imported note keeps its own time.
      await store.memories.add(owner(), 'helper', 'from last week', new Date(START - 7 * 86_400_000));
      expect((await store.memories.recall(owner(), 'helper', 100)).at(-1)).toMatchObject({ text: 'from last week', createdAt: new Date(START - 7 * 86_400_000).toISOString() });
    });

    it('keeps tenants, users (exactly, case included) and assistants apart; clear takes every assistant of one user', async () => {
      await store.memories.add(owner(), 'helper', 'alice helper');
      await store.memories.add(owner(), 'writer', 'alice writer');
      await store.memories.add(owner('Alice'), 'helper', 'capital Alice');
      await store.memories.add(owner('alice', `${tenant}-other`), 'helper', 'other tenant alice');
      expect(await texts(owner())).toEqual(['alice helper']);
      expect(await texts(owner(), 'writer')).toEqual(['alice writer']);
      expect(await texts(owner('Alice'))).toEqual(['capital Alice']);
      expect(await texts(owner('alice', `${tenant}-other`))).toEqual(['other tenant alice']);

      await store.memories.clear(owner());
      expect(await texts(owner())).toEqual([]);
      expect(await texts(owner(), 'writer')).toEqual([]);
      expect(await texts(owner('Alice'))).toEqual(['capital Alice']);
      expect(await texts(owner('alice', `${tenant}-other`))).toEqual(['other tenant alice']);
      await expect(store.memories.clear(owner('nobody'))).resolves.toBeUndefined();
    });

    it('drops notes past the 90-day retention for good', async () => {
      await store.memories.add(owner(), 'helper', 'old');
      advance(60 * 86_400_000);
      await store.memories.add(owner(), 'helper', 'recent');
      advance(30 * 86_400_000 + 1);
      expect(await texts(owner())).toEqual(['recent']);
      // Deleted, not hidden: a clock set back does not bring it back.
      advance(-10 * 86_400_000);
      expect(await texts(owner())).toEqual(['recent']);
    });

    it('keeps a 2,000-character note whole, any script, and refuses empty or longer ones', async () => {
      const long = '\u{1F642}é'.repeat(666) + 'xx';
      expect(long).toHaveLength(2000);
      await store.memories.add(owner(), 'helper', long);
      expect(await texts(owner())).toEqual([long]);
      await expect(store.memories.add(owner(), 'helper', `${long}x`)).rejects.toBeInstanceOf(MemoryNoteError);
      await expect(store.memories.add(owner(), 'helper', ' \n ')).rejects.toThrow('The note is empty');
      expect(await texts(owner())).toEqual([long]);
    });
  });

  it('answers ping', async () => {
    expect(await store.ping()).toBe(true);
  });
}
