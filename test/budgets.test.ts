import type { Socket } from 'socket.io-client';
import type { EventDict } from '#core/events/execution-event.js';
import { api, assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat } from './support/event-waits.js';
import type { GatewayProcess } from './support/app-processes.js';
import { TestSystem } from './support/system.js';

/**
 * Budgets that hold across two gateways and two workers: a tenant's token budget caps 50
 * concurrent runs with no overshoot, a person's spent budget refuses chats on every door while
 * their colleague goes on, and a worker killed mid-call leaves nothing reserved behind.
 */

const KEYS = {
  alice: 'budget-key-alice',
  bob: 'budget-key-bob',
  ada: 'budget-key-ada',
  gina: 'budget-key-gina',
  gus: 'budget-key-gus',
  gil: 'budget-key-gil',
  ian: 'budget-key-ian',
  ivan: 'budget-key-ivan',
};
const API_KEYS = [
  `${KEYS.alice}:acme:alice`,
  `${KEYS.bob}:acme:bob`,
  `${KEYS.ada}:acme:ada:admin`,
  `${KEYS.gina}:globex:gina`,
  `${KEYS.gus}:globex:gus`,
  `${KEYS.gil}:globex:gil:admin`,
  `${KEYS.ian}:initech:ian`,
  `${KEYS.ivan}:initech:ivan:admin`,
].join(',');

/** What a call may produce unless a budget leaves less: every call reserves this much output. */
const MAX_OUTPUT = 200;
/** 30 chunks of `tokN `: about 60 output tokens, well inside MAX_OUTPUT. */
const ANSWER = '[[chunks:30]]';

describe('budgets', () => {
  let system: TestSystem;
  let second: GatewayProcess;

  beforeAll(async () => {
    system = await TestSystem.start({
      workers: [{ DATAAGENT_WORKER_ID: 'worker-a' }, { DATAAGENT_WORKER_ID: 'worker-b' }],
      extraGateways: [{}],
      env: {
        DATAAGENT_API_KEYS: API_KEYS,
        DATAAGENT_LLM_MAX_TOKENS: String(MAX_OUTPUT),
        // Budgets apply on every process at once (they are read per run).
        DATAAGENT_TENANT_CACHE_SECONDS: '0',
        // One run at a time on each worker: the two workers' reservations and settlements interleave
        // on the budget until it binds, rather than most runs meeting the others' holds at once.
        DATAAGENT_WORKER_CONCURRENCY: '1',
        // A killed worker's run is taken over soon.
        DATAAGENT_JOB_LOCK_MS: '3000',
      },
    });
    second = system.extraGateways[0]!;
  });
  afterAll(async () => {
    await system?.stop();
  });

  const putBudget = async (adminKey: string, body: Record<string, unknown>) => {
    const answer = await api(system.url, 'PUT', '/admin/budgets', { apiKey: adminKey, body });
    expect(answer).toMatchObject({ status: 200 });
    return answer.body;
  };
  const budgetsOf = async (adminKey: string) => (await api(second.url, 'GET', '/admin/budgets', { apiKey: adminKey })).body as { budgets: Array<{ scope: string; user_id?: string; limit: string; spent?: string; reserved?: string; resets_at: string }> };
  const tokensOf = (run: EventDict[]) => run.reduce((sum, e) => (e.event_type === 'usage' ? sum + e.input_tokens + e.output_tokens : sum), 0);
  const textOf = (run: EventDict[]) => run.map((e) => (e.event_type === 'text' ? e.content : '')).join('');
  const storedAnswer = async (key: string, sessionId: string) => {
    const messages = (await api(system.url, 'GET', `/sessions/${sessionId}/messages`, { apiKey: key })).body.messages as Array<{ role: string; content: string }>;
    return messages.filter((m) => m.role === 'assistant').map((m) => m.content).join('');
  };
  /** One chat on a socket, to its done: its events (well formed) and its session. */
  const chat = async (socket: Socket, events: EventCollector, message: string) => {
    const ack = await sendChat(socket, { message });
    expect(ack).toMatchObject({ ok: true });
    await events.done(ack.run_id, 60_000);
    const run = events.ofRun(ack.run_id);
    assertWellFormedRun(run);
    return { run, sessionId: ack.session_id, runId: ack.run_id };
  };

  it('admins set budgets of their tenant, with a clear 400 for a bad one; an operator alone names another tenant', async () => {
    const bad = await api(system.url, 'PUT', '/admin/budgets', { apiKey: KEYS.ada, body: { scope: 'user', metric: 'tokens', period: 'day', limit: 10 } });
    expect(bad).toMatchObject({ status: 400, body: { error_code: 'invalid_budget', message: expect.stringContaining('user_id') } });
    expect((await api(system.url, 'PUT', '/admin/budgets', { apiKey: KEYS.ada, body: { scope: 'tenant', metric: 'cost', period: 'week', limit: '1' } })).body.message).toContain('period');
    expect((await api(system.url, 'PUT', '/admin/budgets', { apiKey: KEYS.ada, body: { scope: 'tenant', metric: 'cost', period: 'day', limit: '1.1234567' } })).body.message).toContain('6 decimals');
    expect((await api(system.url, 'PUT', '/admin/budgets', { apiKey: KEYS.alice, body: { scope: 'tenant', metric: 'tokens', period: 'day', limit: 10 } })).status).toBe(403);
    expect((await api(system.url, 'PUT', '/admin/budgets', { apiKey: KEYS.ada, body: { scope: 'tenant', metric: 'tokens', period: 'day', limit: 10, tenant_id: 'globex' } })).status).toBe(403);
    const cost = await putBudget(KEYS.ada, { scope: 'tenant', metric: 'cost', period: 'month', limit: '25.50' });
    expect(cost).toMatchObject({ scope: 'tenant', metric: 'cost', period: 'month', limit: '25.500000' });
    expect((await api(system.url, 'DELETE', '/admin/budgets?scope=tenant&metric=cost&period=month', { apiKey: KEYS.ada })).body).toEqual({ deleted: true });
    expect((await budgetsOf(KEYS.ada)).budgets).toEqual([]);
  });

  it('holds a tenant token budget over 50 concurrent runs through two gateways and two workers: no overshoot, and every run it stopped ends done{reason: budget} with its partial text stored', async () => {
    const sockets = await Promise.all([connectChat(system.url, KEYS.gina), connectChat(second.url, KEYS.gus)]);
    const collectors = sockets.map((s) => new EventCollector(s));
    try {
      // One run without a budget shows what a run spends.
      const probe = await chat(sockets[0]!, collectors[0]!, ANSWER);
      const perRun = tokensOf(probe.run);
      const limit = 20 * perRun;
      await putBudget(KEYS.gil, { scope: 'tenant', metric: 'tokens', period: 'day', limit });

      const acks = await Promise.all(Array.from({ length: 50 }, (_, i) => sendChat(sockets[i % 2]!, { message: ANSWER })));
      expect(acks.every((a) => a.ok)).toBe(true);
      await Promise.all(acks.map((ack, i) => collectors[i % 2]!.done(ack.run_id, 60_000)));
      const runs = acks.map((ack, i) => ({ ack, key: i % 2 ? KEYS.gus : KEYS.gina, run: collectors[i % 2]!.ofRun(ack.run_id) }));
      for (const { run } of runs) assertWellFormedRun(run);

      const spent = runs.reduce((sum, { run }) => sum + tokensOf(run), 0);
      const stopped = runs.filter(({ run }) => run.at(-1)?.event_type === 'done' && (run.at(-1) as { reason?: string }).reason === 'budget');
      const cut = stopped.filter(({ run }) => textOf(run) !== '');
      const completed = runs.filter(({ run }) => !stopped.some((s) => s.run === run));
      console.log(`tenant budget ${limit} tokens (a run spends ${perRun}): spent ${spent} over 50 runs, overshoot ${Math.max(0, spent - limit)}; ${completed.length} completed, ${stopped.length} stopped by the budget (${cut.length} mid-answer)`);
      expect(spent).toBeLessThanOrEqual(limit);
      expect(completed.length).toBeGreaterThan(0);
      expect(stopped.length).toBeGreaterThan(0);
      for (const { run } of completed) {
        expect(run.some((e) => e.event_type === 'error')).toBe(false);
        expect(textOf(run).split(' ').filter(Boolean)).toHaveLength(30);
      }
      for (const { ack, key, run } of stopped) {
        expect(run.filter((e) => e.event_type === 'error')).toEqual([expect.objectContaining({ error_code: 'budget_exhausted', recoverable: false })]);
        expect(await storedAnswer(key, ack.session_id)).toBe(textOf(run));
      }
      // The budget's counters say the same: everything settled, nothing held.
      const [tenantBudget] = (await budgetsOf(KEYS.gil)).budgets;
      expect(tenantBudget).toMatchObject({ scope: 'tenant', limit: String(limit), spent: String(spent), reserved: '0' });
    } finally {
      for (const s of sockets) s.disconnect();
    }
  });

  it("refuses a person whose budget is spent with 429 budget_exhausted and Retry-After on REST, Socket.IO, chat completions and the Responses API, while a colleague goes on", async () => {
    const socket = await connectChat(system.url, KEYS.alice);
    const events = new EventCollector(socket);
    try {
      await putBudget(KEYS.ada, { scope: 'user', user_id: '*', metric: 'tokens', period: 'day', limit: 1_000_000 });
      const first = await chat(socket, events, ANSWER);
      const spent = tokensOf(first.run);
      // Alice's own budget, just above what she spent: less than the fewest tokens a call may ask is left.
      await putBudget(KEYS.ada, { scope: 'user', user_id: 'alice', metric: 'tokens', period: 'day', limit: spent + 10 });

      const rest = await api(second.url, 'POST', '/chat', { apiKey: KEYS.alice, body: { message: 'more' } });
      const resetsAt = new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00Z').getTime() + 86_400_000;
      expect(rest).toMatchObject({
        status: 429,
        body: {
          error_code: 'budget_exhausted',
          details: { budget: { scope: 'user', metric: 'tokens', period: 'day', limit: String(spent + 10) }, spent: String(spent), resets_at: new Date(resetsAt).toISOString() },
        },
      });
      const retryAfter = Number(rest.headers.get('retry-after'));
      expect(Math.abs(retryAfter - (resetsAt - Date.now()) / 1000)).toBeLessThan(30);
      expect(await sendChat(socket, { message: 'more' })).toMatchObject({ ok: false, error_code: 'budget_exhausted' });
      for (const [path, body] of [
        ['/v1/chat/completions', { model: 'default', messages: [{ role: 'user', content: 'more' }] }],
        ['/v1/responses', { model: 'default', input: 'more' }],
      ] as const) {
        const refused = await fetch(`${system.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEYS.alice }, body: JSON.stringify(body) });
        expect(refused.status).toBe(429);
        expect(Math.abs(Number(refused.headers.get('retry-after')) - retryAfter)).toBeLessThan(30);
        expect(await refused.json()).toMatchObject({ error: { type: 'rate_limit_error', code: 'budget_exhausted' } });
      }
      // Bob, of the same tenant, has his own count under the tenant's `*` budget.
      const bob = await api(second.url, 'POST', '/chat', { apiKey: KEYS.bob, body: { message: ANSWER } });
      expect(bob).toMatchObject({ status: 200 });
      expect(textOf(bob.body.events).split(' ').filter(Boolean)).toHaveLength(30);
      // A client may lower its run's own token limit: too low for even one call, the run ends on it.
      const lowered = await api(system.url, 'POST', '/chat', { apiKey: KEYS.bob, body: { message: ANSWER, limits: { max_tokens: 50 } } });
      expect(lowered.body.events.filter((e: EventDict) => e.event_type === 'error')).toEqual([expect.objectContaining({ error_code: 'budget_exhausted', error: expect.stringContaining("This run's token budget") })]);
      expect(lowered.body.events.at(-1)).toMatchObject({ event_type: 'done', reason: 'budget' });
    } finally {
      socket.disconnect();
    }
  });

  it('gives back what a worker killed mid-call had reserved: the budget is whole again, a call needing all that is left is granted, and one cut by the budget keeps its partial answer', async () => {
    const message = `${ANSWER} [[slow:60]]`;
    await putBudget(KEYS.ivan, { scope: 'tenant', metric: 'tokens', period: 'day', limit: 100_000 });
    const socket = await connectChat(system.url, KEYS.ian);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message });
      await events.next((e) => e.run_id === ack.run_id && e.event_type === 'text' && e.seq >= 5);
      // Mid-call: the call holds its worst case (its input and MAX_OUTPUT tokens).
      const held = Number((await budgetsOf(KEYS.ivan)).budgets[0]!.reserved);
      expect(held).toBeGreaterThan(MAX_OUTPUT);
      const started = events.ofRun(ack.run_id).find((e) => e.event_type === 'run_started') as { worker_id: string };
      const doomed = system.workers.find((w) => w.workerId === started.worker_id)!;
      await doomed.kill();
      await events.done(ack.run_id, 60_000);
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      expect(run.filter((e) => e.event_type === 'error')).toEqual([expect.objectContaining({ error_code: 'worker_lost' })]);

      // Nothing is held once the run ended: the dead worker's reservation was given back when the run was taken over.
      const spent = tokensOf(run);
      expect((await budgetsOf(KEYS.ivan)).budgets[0]).toMatchObject({ spent: String(spent), reserved: '0' });
      console.log(`worker killed mid-call holding ${held} tokens: afterwards ${spent} spent, 0 reserved`);

      // Exactly what one call of this run holds is left: it is granted in full, and the run completes.
      await putBudget(KEYS.ivan, { scope: 'tenant', metric: 'tokens', period: 'day', limit: spent + held });
      const whole = await chat(socket, events, message);
      expect(whole.run.some((e) => e.event_type === 'error')).toBe(false);
      expect(textOf(whole.run).split(' ').filter(Boolean)).toHaveLength(30);

      // 40 output tokens left for the next call: its answer is cut there, kept, and the run ends saying why.
      const spentNow = spent + tokensOf(whole.run);
      await putBudget(KEYS.ivan, { scope: 'tenant', metric: 'tokens', period: 'day', limit: spentNow + held - MAX_OUTPUT + 40 });
      const cut = await chat(socket, events, message);
      expect(cut.run.at(-1)).toMatchObject({ event_type: 'done', reason: 'budget' });
      expect(cut.run.filter((e) => e.event_type === 'error')).toEqual([expect.objectContaining({ error_code: 'budget_exhausted', retry_after: expect.any(Number) })]);
      // About 40: the input estimate of this call may differ from the first run's by a token or two.
      const cutOutput = (cut.run.find((e) => e.event_type === 'usage') as { output_tokens: number }).output_tokens;
      expect(Math.abs(cutOutput - 40)).toBeLessThanOrEqual(5);
      const partial = textOf(cut.run);
      expect(partial.split(' ').filter(Boolean).length).toBeLessThan(30);
      expect(partial.length).toBeGreaterThan(0);
      expect(await storedAnswer(KEYS.ian, cut.sessionId)).toBe(partial);
      expect((await budgetsOf(KEYS.ivan)).budgets[0]).toMatchObject({ reserved: '0' });
    } finally {
      socket.disconnect();
    }
  });
});
