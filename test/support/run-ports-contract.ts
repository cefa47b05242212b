import { randomUUID } from 'node:crypto';
import type { EventDict, EventType } from '#core/events/execution-event.js';
import { RunFencedError, type BudgetedRun, type HitlRecords, type RunBudgets, type RunLedger, type RunLog, type StoredStep } from '#core/run/run-ports.js';
import type { BudgetDefinition } from '#core/usage/budget.js';
import { PriceTable } from '#core/usage/price-table.js';

/** The ports a contract runs against: the log and the ledger share their store (the ledger's epoch fences the log's appends). */
export interface RunPortsUnderTest {
  log: RunLog;
  ledger: RunLedger;
  hitl: HitlRecords;
  budgets: RunBudgets;
}

const id = (kind: string) => `contract-${kind}-${randomUUID()}`;
const event = (sessionId: string, runId: string, type: EventType, fields: Record<string, unknown> = {}): EventDict =>
  ({ event_type: type, timestamp: '2026-01-01T00:00:00.000Z', session_id: sessionId, run_id: runId, seq: 0, ...fields }) as EventDict;

/**
 * The rules every implementation of the run's ports keeps, whatever keeps the data: the memory
 * backend (libs/core/src/run/memory) and the Redis adapters (libs/transport) run these same
 * cases, so a spec that passes on memory says something about Redis.
 */
export function runPortsContract(name: string, ports: () => RunPortsUnderTest): void {
  describe(`${name}: the run's ports`, () => {
    describe('RunLog', () => {
      it('numbers events 1, 2, … and reads them back after a seq', async () => {
        const { log } = ports();
        const [s, r] = [id('session'), id('run')];
        for (const text of ['a', 'b', 'c']) expect((await log.append(event(s, r, 'text', { content: text }))).status).toBe('appended');
        expect((await log.range(r, 1)).map((e) => [e.seq, e.event_type === 'text' ? e.content : '']).flat()).toEqual([2, 'b', 3, 'c']);
        expect((await log.range(r, 0, 2)).map((e) => e.seq)).toEqual([1, 2]);
        expect(await log.lastSeq(r)).toBe(3);
      });

      it('takes one done: the run is sealed, and nothing after it lands', async () => {
        const { log } = ports();
        const [s, r] = [id('session'), id('run')];
        await log.append(event(s, r, 'text', { content: 'a' }));
        expect((await log.append(event(s, r, 'done', { cancelled: false }))).status).toBe('appended');
        expect(await log.isSealed(r)).toBe(true);
        expect((await log.append(event(s, r, 'text', { content: 'late' }))).status).toBe('sealed');
        expect((await log.append(event(s, r, 'done', { cancelled: true }))).status).toBe('sealed');
        expect(await log.requestCancel(r)).toBe(false);
        expect(await log.lastSeq(r)).toBe(2);
      });

      it('after a cancel, lets in only a closing event and the done', async () => {
        const { log } = ports();
        const [s, r] = [id('session'), id('run')];
        expect(await log.requestCancel(r)).toBe(true);
        expect(await log.isCancelRequested(r)).toBe(true);
        expect((await log.append(event(s, r, 'text', { content: 'more' }))).status).toBe('cancelled');
        expect((await log.append(event(s, r, 'tool_result', { tool_call_id: 'c', status: 'cancelled' }), undefined, true)).status).toBe('appended');
        expect((await log.append(event(s, r, 'done', { cancelled: true }))).status).toBe('appended');
      });

      it('fences off an epoch the ledger has moved past', async () => {
        const { log, ledger } = ports();
        const [s, r] = [id('session'), id('run')];
        const first = await ledger.claim(r);
        const second = await ledger.claim(r);
        expect(second).toBeGreaterThan(first);
        expect((await log.append(event(s, r, 'text', { content: 'old owner' }), first)).status).toBe('fenced');
        expect((await log.append(event(s, r, 'text', { content: 'new owner' }), second)).status).toBe('appended');
      });

      it("keeps a session's runs without a done, with their owners; a done takes a run off", async () => {
        const { log } = ports();
        const [s, a, b] = [id('session'), id('run'), id('run')];
        await log.markActive(s, a, { tenantId: 't', userId: 'u' });
        await log.markActive(s, b, { tenantId: 't', userId: 'v' });
        expect((await log.activeRuns(s)).sort((x, y) => x.userId.localeCompare(y.userId))).toEqual([
          { runId: a, tenantId: 't', userId: 'u' },
          { runId: b, tenantId: 't', userId: 'v' },
        ]);
        await log.append(event(s, a, 'done', { cancelled: false }));
        await log.forgetActive(s, b);
        expect(await log.activeRuns(s)).toEqual([]);
      });
    });

    describe('RunLedger', () => {
      it('a take raises the epoch; a takeover gets the steps recorded before it, and the former owner is fenced', async () => {
        const { ledger } = ports();
        const r = id('run');
        const first = await ledger.take(r);
        if (first.sealed) throw new Error('a new run is not sealed');
        expect(first.steps).toEqual([]);
        const step: StoredStep = { seq: 3, message: { role: 'assistant', content: 'hi' } };
        await ledger.recordStep(r, first.epoch, step);
        const second = await ledger.take(r);
        if (second.sealed) throw new Error('not sealed');
        expect(second.epoch).toBeGreaterThan(first.epoch);
        expect(second.steps).toEqual([step]);
        expect(await ledger.steps(r)).toEqual([step]);
        await expect(ledger.recordStep(r, first.epoch, step)).rejects.toBeInstanceOf(RunFencedError);
        await expect(ledger.intend(r, first.epoch, 'c1', 'h', 'http_request')).rejects.toBeInstanceOf(RunFencedError);
      });

      it('records an intent once: a second attempt at the same call and arguments is told it was interrupted', async () => {
        const { ledger } = ports();
        const r = id('run');
        const taken = await ledger.take(r);
        if (taken.sealed) throw new Error('not sealed');
        expect(await ledger.intend(r, taken.epoch, 'c1', 'hash', 'http_request')).toBe('new');
        expect(await ledger.intend(r, taken.epoch, 'c1', 'hash', 'http_request')).toBe('interrupted');
        expect(await ledger.intend(r, taken.epoch, 'c1', 'other', 'http_request')).toBe('new');
      });

      it('keeps a parked wait for its owner only, and the next take consumes it', async () => {
        const { ledger } = ports();
        const r = id('run');
        const taken = await ledger.take(r);
        if (taken.sealed) throw new Error('not sealed');
        const wait = { requestId: 'q', toolCallId: 'c1', until: 1_900_000_000_000, seq: 4 };
        await expect(ledger.park(r, taken.epoch + 1, wait)).rejects.toBeInstanceOf(RunFencedError);
        await ledger.park(r, taken.epoch, wait);
        expect(await ledger.parkedOf(r)).toEqual(wait);
        const next = await ledger.take(r);
        expect(next.sealed === false && next.parked).toEqual(wait);
        expect(await ledger.parkedOf(r)).toBeNull();
      });

      it('a run with its done cannot be taken', async () => {
        const { log, ledger } = ports();
        const [s, r] = [id('session'), id('run')];
        await log.append(event(s, r, 'done', { cancelled: false }));
        expect(await ledger.take(r)).toEqual({ sealed: true });
      });
    });

    describe('RunBudgets', () => {
      const at = new Date('2026-12-08T10:00:00Z');
      const budget = (tenantId: string, limit: number, scope: 'tenant' | 'user' = 'tenant'): BudgetDefinition => ({ tenantId, scope, userId: scope === 'user' ? '*' : '', metric: 'tokens', period: 'day', limit: BigInt(limit), createdAt: at, updatedAt: at });
      const runOf = (tenantId: string, budgets: BudgetDefinition[], userId = 'alice'): BudgetedRun => ({ runId: id('run'), tenantId, userId, timeZone: 'UTC', budgets, prices: PriceTable.EMPTY, now: () => at });
      const claim = (call: number, inputTokens: number, maxOutputTokens: number) => ({ call, model: 'openai:gpt-4o', inputTokens, maxOutputTokens });

      it('grants a call what every budget has left, and refuses one that cannot have the fewest tokens', async () => {
        const { budgets } = ports();
        const tenantId = id('tenant');
        const limits = [budget(tenantId, 1_000), budget(tenantId, 700, 'user')];
        const run = budgets.forRun(runOf(tenantId, limits));
        expect(await run.reserve(claim(1, 100, 4_096))).toMatchObject({ granted: true, maxOutputTokens: 600, limitedBy: { scope: 'user', limit: '700' } });
        const refused = await budgets.forRun(runOf(tenantId, limits)).reserve(claim(1, 300, 4_096));
        expect(refused).toMatchObject({ granted: false, exhausted: { scope: 'tenant', metric: 'tokens', period: 'day', limit: '1000', spent: '700', resets_at: '2026-12-09T00:00:00.000Z' } });
        // Another person of the tenant has a user budget of their own, but the tenant's holds for both.
        expect(await budgets.forRun(runOf(tenantId, limits, 'bob')).reserve(claim(1, 100, 4_096))).toMatchObject({ granted: true, maxOutputTokens: 200 });
      });

      it('settles a call to what it spent, and gives back what a run still holds, and only that run', async () => {
        const { budgets } = ports();
        const tenantId = id('tenant');
        const limits = [budget(tenantId, 1_000)];
        const [dead, alive] = [runOf(tenantId, limits), runOf(tenantId, limits)];
        const a = budgets.forRun(dead);
        await a.reserve(claim(1, 100, 100));
        await a.settle(1, { inputTokens: 100, outputTokens: 20, cost: 0n });
        await a.reserve(claim(2, 100, 300));
        await budgets.forRun(alive).reserve(claim(1, 100, 100));
        // 120 spent, 400 + 200 held: a call that needs 300 does not fit.
        expect(await budgets.forRun(runOf(tenantId, limits)).reserve(claim(1, 300, 16))).toMatchObject({ granted: false });
        expect(await budgets.release(dead)).toBe(1);
        expect(await budgets.release(dead)).toBe(0);
        // 120 spent, 200 held: 680 left, as a call that needs all of it finds.
        expect(await budgets.forRun(runOf(tenantId, limits)).reserve(claim(1, 300, 380))).toMatchObject({ granted: true, maxOutputTokens: 380 });
        expect(await budgets.forRun(runOf(tenantId, limits)).reserve(claim(1, 1, 16))).toMatchObject({ granted: false, exhausted: { spent: '1000' } });
      });
    });

    describe('HitlRecords', () => {
      const owner = { tenantId: 'tenant-a', userId: 'user-a' };
      const open = (hitl: HitlRecords, fields: { expiresAt?: number } = {}) => {
        const record = { requestId: id('request'), runId: id('run'), sessionId: id('session'), ...owner, tool: 'http_request', argsHash: 'h', ...fields };
        return hitl.open(record).then((status) => ({ record, status }));
      };

      it('opens a request once, and its owner decides it once', async () => {
        const { hitl } = ports();
        const { record, status } = await open(hitl);
        expect(status).toBe('pending');
        expect(await hitl.open(record)).toBe('pending');
        expect(await hitl.decide(record.requestId, { tenantId: 'tenant-a', userId: 'someone-else' }, 'approve')).toEqual({ outcome: 'missing' });
        expect(await hitl.decide(record.requestId, owner, 'approve')).toEqual({ outcome: 'ok', runId: record.runId, sessionId: record.sessionId });
        expect(await hitl.decide(record.requestId, owner, 'reject')).toEqual({ outcome: 'decided:approve' });
        expect(await hitl.open(record)).toBe('approve');
        expect(await hitl.get(record.requestId)).toMatchObject({ status: 'approve', runId: record.runId });
        expect(await hitl.decide(id('request'), owner, 'approve')).toEqual({ outcome: 'missing' });
      });

      it("refuses an owner's decision after the deadline; the system's still closes it", async () => {
        const { hitl } = ports();
        const { record } = await open(hitl, { expiresAt: Date.now() - 1_000 });
        expect(await hitl.decide(record.requestId, owner, 'approve')).toEqual({ outcome: 'expired' });
        expect((await hitl.decide(record.requestId, null, 'timeout', 'No decision in time')).outcome).toBe('ok');
        expect(await hitl.get(record.requestId)).toMatchObject({ status: 'timeout', message: 'No decision in time' });
      });
    });
  });
}
