import mysql from 'mysql2/promise';
import type { EventDict, UsageEventDict } from '#core/events/execution-event.js';
import { formatPico, parsePico } from '#core/usage/money.js';
import { PriceTable } from '#core/usage/price-table.js';
import { api, connectChat } from './support/chat-clients.js';
import { EventCollector, chatToDone, runEvent, sendChat, waitUntil } from './support/event-waits.js';
import { defaultScript, lastUserText, type ScriptStep } from './support/scripted-llm-server.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

const ALICE = TEST_API_KEY;
const BOB = OTHER_API_KEY;
const CAROL = 'test-key-carol-admin';
const DAVE = 'test-key-dave-globex-admin';
const OLGA = 'test-key-olga-operator';
const KEYS = `${ALICE}:acme:alice,${BOB}:acme:bob,${CAROL}:acme:carol:admin,${DAVE}:globex:dave:admin,${OLGA}:ops:olga:operator`;

/** What the environment prices at; the table set through the admin API must win over it. */
const ENVIRONMENT_PRICES = { '*': { input: '1', output: '1' } };
const API_PRICES = { '*': { input: '2.5', output: '10.123456', cached_input: '1.25' } };

/** A period that holds every call of the test, whenever it runs (a report covers at most ten years). */
const AROUND_NOW = `from=${dayOffset(-3)}&to=${dayOffset(3)}`;

function dayOffset(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

const TODO = '[[tool:write_todos {"todos":[{"content":"count it","status":"pending"}]}]]';

interface Sums {
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cost: string;
  estimated_calls: number;
}
interface Row extends Sums {
  key: string;
  tenant_id?: string;
  currency: string;
}
interface Report {
  from: string;
  to: string;
  group_by: string;
  tenant_id: string | null;
  user_id: string | null;
  rows: Row[];
  totals: Array<Sums & { currency: string }>;
}

/** A call as summed: its usage event and whose run it was. */
interface Call {
  user: string;
  event: UsageEventDict;
}

/** The sums of `calls` per key, as a report's rows would give them (cost exact, as a decimal string). */
function expected(calls: Call[], keyOf: (call: Call) => string): Record<string, Sums> {
  const out: Record<string, Sums & { pico: bigint }> = {};
  for (const call of calls) {
    const key = keyOf(call);
    const sums = (out[key] ??= { calls: 0, input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, cost: '', estimated_calls: 0, pico: 0n });
    sums.calls++;
    sums.input_tokens += call.event.input_tokens;
    sums.output_tokens += call.event.output_tokens;
    sums.cached_input_tokens += call.event.cached_input_tokens;
    sums.pico += parsePico(call.event.cost);
    if (call.event.estimated) sums.estimated_calls++;
  }
  return Object.fromEntries(Object.entries(out).map(([key, { pico, ...sums }]) => [key, { ...sums, cost: formatPico(pico) }]));
}

/** A report's rows by key, without the currency (every call is in the one the table set). */
function byKey(report: Report): Record<string, Sums> {
  return Object.fromEntries(report.rows.map(({ key, tenant_id: _tenant, currency: _currency, ...sums }) => [key, sums]));
}

/** A CSV answer's lines as objects, by its header. */
function csvRows(text: string): Array<Record<string, string>> {
  const [header, ...lines] = text.trimEnd().split('\r\n');
  const columns = header!.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((cell, i) => [columns[i]!, cell])));
}

/**
 * Usage through the API is the sum of the `usage` events in the runs' logs: two people of one
 * tenant, calls whose usage the model reported (some with cached input) and calls it did not
 * (estimated), priced from a table set through the admin API; per person, model and day, cost
 * exact; CSV as JSON; a person sees their own, an admin their tenant, an operator any; and a run
 * whose worker was killed mid-run counts each of its calls once.
 */
describe('usage, metered and shown', () => {
  let system: TestSystem;
  /** Every run made, with its owner's key. */
  const runs: Array<{ runId: string; user: string; key: string }> = [];

  const get = <T = Report>(key: string, path: string, headers: Record<string, string> = {}) => api<T>(system.url, 'GET', path, { apiKey: key, headers });

  /** Every usage event of every run, read back from each run's event log by its owner. */
  async function calls(): Promise<Call[]> {
    const all: Call[] = [];
    for (const run of runs) {
      for (const event of await eventLog(run.runId, run.key)) if (event.event_type === 'usage') all.push({ user: run.user, event });
    }
    return all;
  }

  async function eventLog(runId: string, key: string): Promise<EventDict[]> {
    const res = await fetch(`${system.url}/api/v1/runs/${encodeURIComponent(runId)}/events`, { headers: { 'x-api-key': key } });
    expect(res.status).toBe(200);
    const text = await res.text();
    return text
      .split(/\n\n/)
      .map((block) => block.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n'))
      .filter(Boolean)
      .map((data) => JSON.parse(data) as EventDict);
  }

  /** Waits until the archive has counted `count` calls of `key`'s person (usage is written with the run's events, in the archive flush). */
  async function counted(key: string, count: number): Promise<void> {
    let seen = -1;
    await waitUntil(
      async () => {
        const { body } = await get(key, `/usage?group_by=model&${AROUND_NOW}`);
        seen = body.totals.reduce((n, t) => n + t.calls, 0);
        return seen === count;
      },
      20_000,
      () => `${seen} calls counted, ${count} expected`,
    ).catch(() => undefined);
    expect(seen).toBe(count);
  }

  beforeAll(async () => {
    system = await TestSystem.start({
      env: {
        DATAAGENT_SANDBOX: 'none',
        DATAAGENT_API_KEYS: KEYS,
        DATAAGENT_MODEL_PRICES: JSON.stringify(ENVIRONMENT_PRICES),
        // Each run reads the table in force: a table set through the API applies to the next run.
        DATAAGENT_PRICES_CACHE_SECONDS: '0',
        // A killed worker's runs are taken over soon.
        DATAAGENT_JOB_LOCK_MS: '3000',
      },
    });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it("sets the price table through the admin API, over the environment's, and records who changed it", async () => {
    const before = await get(OLGA, '/admin/prices');
    expect(before.body).toMatchObject({ source: 'environment', currency: 'USD', prices: ENVIRONMENT_PRICES, updated_at: null });

    const bad = await api(system.url, 'PUT', '/admin/prices', { apiKey: OLGA, body: { prices: { 'gpt-4o': { input: '2.5' } } } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error_code: 'invalid_price_table', message: 'model "gpt-4o": "output" must be a price per million tokens, such as "2.50"' });
    const tooPrecise = await api(system.url, 'PUT', '/admin/prices', { apiKey: OLGA, body: { prices: { '*': { input: '0.0000001', output: '1' } } } });
    expect([tooPrecise.status, tooPrecise.body.error_code]).toEqual([400, 'invalid_price_table']);
    const byAdmin = await api(system.url, 'PUT', '/admin/prices', { apiKey: CAROL, body: { prices: API_PRICES } });
    expect(byAdmin.status).toBe(403);

    const set = await api(system.url, 'PUT', '/admin/prices', { apiKey: OLGA, body: { prices: API_PRICES, currency: 'EUR' } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ source: 'database', currency: 'EUR', prices: API_PRICES, updated_by: 'ops/olga' });
    expect((await get(CAROL, '/admin/prices')).body).toMatchObject({ source: 'database', currency: 'EUR', prices: API_PRICES });

    const changes = await get<{ changes: Array<{ changed_by: string; before: unknown; after: unknown }> }>(OLGA, '/admin/prices/changes');
    expect(changes.body.changes).toEqual([expect.objectContaining({ changed_by: 'ops/olga', before: null, after: { prices: API_PRICES, currency: 'EUR' } })]);
    expect((await get(CAROL, '/admin/prices/changes')).status).toBe(403);
  });

  it("sums each person's calls, reported and estimated, exactly as their runs' logs record them", async () => {
    const turns: Array<[string, string, string]> = [
      ['alice', ALICE, 'a plain answer'],
      ['alice', ALICE, 'an answer whose usage the model does not report [[no_usage]]'],
      ['alice', ALICE, `two calls, part of the prompt cached [[cached:300]] ${TODO}`],
      ['bob', BOB, 'a longer answer [[chunks:5]]'],
      ['bob', BOB, `two calls, neither reported [[no_usage]] ${TODO}`],
    ];
    const done = await Promise.all(turns.map(([, key, message]) => chatToDone(system.url, key, message)));
    for (const [i, events] of done.entries()) runs.push({ runId: events[0]!.run_id, user: turns[i]![0], key: turns[i]![1] });
    await counted(ALICE, 4);
    await counted(BOB, 3);

    const all = await calls();
    expect(all).toHaveLength(7);
    // The mix the figures must hold for: reported, estimated, and cached input.
    expect(all.filter((c) => c.event.estimated).length).toBe(3);
    expect(all.filter((c) => c.event.cached_input_tokens > 0).length).toBe(2);
    // Priced from the table set through the API, exactly.
    const table = PriceTable.parse(API_PRICES, 'EUR');
    for (const { event } of all) {
      const { cost } = table.cost(event.model, { inputTokens: event.input_tokens, outputTokens: event.output_tokens, cachedInputTokens: event.cached_input_tokens });
      expect([event.cost, event.currency]).toEqual([formatPico(cost), 'EUR']);
    }
    // The worker's counters: tokens by kind and cost, by model, as the calls add up.
    const scraped = await (await fetch(system.workers[0]!.metricsUrl!)).text();
    const counter = (name: string, labels: Record<string, string>) =>
      scraped
        .split('\n')
        .filter((line) => line.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    const model = all[0]!.event.model;
    const total = expected(all, () => 'all').all!;
    expect([counter('dataagent_model_tokens_total', { model, kind: 'input' }), counter('dataagent_model_tokens_total', { model, kind: 'output' }), counter('dataagent_model_tokens_total', { model, kind: 'cached_input' })]).toEqual([total.input_tokens, total.output_tokens, total.cached_input_tokens]);
    expect(counter('dataagent_model_cost_total', { model, currency: 'EUR' })).toBeCloseTo(Number(total.cost), 9);
    // No tenant label unless the operator turns it on.
    expect(scraped).not.toMatch(/dataagent_model_tokens_total\{[^}]*tenant=/);

    const days = all.map((c) => c.event.timestamp.slice(0, 10)).sort();
    const period = `from=${days[0]}&to=${days.at(-1)}`;
    const dayOf = (c: Call) => c.event.timestamp.slice(0, 10);

    // Each person: their own, per day and per model.
    for (const [user, key] of [['alice', ALICE], ['bob', BOB]] as const) {
      const own = all.filter((c) => c.user === user);
      const perDay = await get(key, `/usage?${period}`);
      expect(perDay.status).toBe(200);
      expect(perDay.body).toMatchObject({ group_by: 'day', tenant_id: 'acme', user_id: user });
      expect(byKey(perDay.body)).toEqual(expected(own, dayOf));
      expect(byKey((await get(key, `/usage?${period}&group_by=model`)).body)).toEqual(expected(own, (c) => c.event.model));
      // A person cannot look at another's: user_id is not theirs to choose.
      expect(byKey((await get(key, `/usage?${period}&group_by=user&user_id=${user === 'alice' ? 'bob' : 'alice'}`)).body)).toEqual(expected(own, () => user));
    }

    // The tenant's admin: per person, per model, per day, and the totals.
    const perUser = await get(CAROL, `/admin/usage?${period}&group_by=user`);
    expect(byKey(perUser.body)).toEqual(expected(all, (c) => c.user));
    expect(perUser.body.rows.map((r) => r.tenant_id)).toEqual(['acme', 'acme']);
    expect(perUser.body.totals).toEqual([{ currency: 'EUR', ...expected(all, () => 'all').all }]);
    expect(byKey((await get(CAROL, `/admin/usage?${period}&group_by=model`)).body)).toEqual(expected(all, (c) => c.event.model));
    expect(byKey((await get(CAROL, `/admin/usage?${period}&user_id=bob`)).body)).toEqual(expected(all.filter((c) => c.user === 'bob'), dayOf));
    // An operator: this tenant, or every tenant.
    expect(byKey((await get(OLGA, `/admin/usage?${period}&group_by=user&tenant_id=acme`)).body)).toEqual(expected(all, (c) => c.user));
    const everyone = await get(OLGA, `/admin/usage?${period}&group_by=user`);
    expect(everyone.body.tenant_id).toBeNull();
    expect(everyone.body.rows.map((r) => `${r.tenant_id}/${r.key}`)).toEqual(['acme/alice', 'acme/bob']);
    // Another tenant's admin sees nothing of this one.
    const globex = await get(DAVE, `/admin/usage?${period}&group_by=user`);
    expect([globex.status, globex.body.tenant_id, globex.body.rows, globex.body.totals]).toEqual([200, 'globex', [], []]);
    expect((await get(DAVE, `/admin/usage?${period}&tenant_id=acme`)).status).toBe(403);
    expect((await get(ALICE, `/admin/usage?${period}`)).status).toBe(403);

    // CSV: the same rows, as format=csv or Accept: text/csv asks.
    for (const [path, headers] of [
      [`/admin/usage?${period}&group_by=user&format=csv`, {}],
      [`/admin/usage?${period}&group_by=user`, { accept: 'text/csv' }],
    ] as const) {
      const csv = await get<string>(CAROL, path, headers);
      expect([csv.status, csv.headers.get('content-type')]).toEqual([200, 'text/csv; charset=utf-8']);
      expect(csv.body.split('\r\n')[0]).toBe('tenant_id,user_id,calls,input_tokens,output_tokens,cached_input_tokens,cost,currency,estimated_calls');
      expect(csvRows(csv.body)).toEqual(perUser.body.rows.map((r) => ({ tenant_id: r.tenant_id, user_id: r.key, calls: String(r.calls), input_tokens: String(r.input_tokens), output_tokens: String(r.output_tokens), cached_input_tokens: String(r.cached_input_tokens), cost: r.cost, currency: r.currency, estimated_calls: String(r.estimated_calls) })));
    }
    const ownCsv = await get<string>(BOB, `/usage?${period}&format=csv`);
    expect(csvRows(ownCsv.body).map((r) => [r.day, r.calls, r.cost])).toEqual(perDayOf(all.filter((c) => c.user === 'bob')));

    // Bad input: 400 naming what is wrong.
    for (const query of ['from=2026-02-30', 'group_by=week', `from=${days.at(-1)}&to=2000-01-01`, 'format=xml']) {
      const bad = await get(ALICE, `/usage?${query}`);
      expect([query, bad.status, (bad.body as unknown as { error_code: string }).error_code]).toEqual([query, 400, 'invalid_usage_query']);
    }
  });

  it('a run continued after its worker was killed (kill -9) mid-run counts each of its calls once', async () => {
    const before = (await calls()).filter((c) => c.user === 'alice').length;
    // The first call asks for a tool; the call after its result hangs until the worker is killed,
    // and answers on the worker that continues the run.
    let phase: 'doomed' | 'rescuer' = 'doomed';
    system.llm.setScript((req): ScriptStep[] => {
      if (!lastUserText(req).includes('rescue me')) return defaultScript(req);
      if (req.body.messages?.at(-1)?.role !== 'tool') return defaultScript(req);
      return phase === 'doomed' ? [{ text: 'half ' }, { hang: true }] : [{ text: 'answered after the takeover' }];
    });
    const socket = await connectChat(system.url, ALICE);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: `rescue me ${TODO}` });
      runs.push({ runId: ack.run_id, user: 'alice', key: ALICE });
      await events.next(runEvent(ack.run_id, 'tool_result'));
      await waitUntil(() => system.llm.openStreams === 1);
      // The first call's usage is in the archive before the kill: the worker that continues the
      // run archives its log again, and must not count it twice.
      await counted(ALICE, before + 1);
      await system.workers[0]!.kill();
      phase = 'rescuer';
      await system.addWorker();
      const done = await events.done(ack.run_id, 30_000);
      expect(done.cancelled).toBe(false);
    } finally {
      socket.disconnect();
      system.llm.setScript();
    }
    const run = runs.at(-1)!;
    const log = await eventLog(run.runId, ALICE);
    const metered = log.filter((e): e is UsageEventDict => e.event_type === 'usage');
    // Every call that answered is in the log once: the first, and the second made again after the
    // takeover (the hung one never answered, so it reported nothing).
    const asked = system.llm.requests.filter((r) => lastUserText(r).includes('rescue me'));
    const answered = asked.filter((r) => r.usage);
    expect(asked.length).toBeGreaterThan(answered.length);
    expect(metered.map((e) => e.input_tokens)).toEqual(answered.map((r) => r.usage!.prompt_tokens));
    expect(metered.length).toBeGreaterThanOrEqual(2);
    await counted(ALICE, before + metered.length);
    const all = await calls();
    const alices = all.filter((c) => c.user === 'alice');
    expect(byKey((await get(ALICE, `/usage?group_by=model&${AROUND_NOW}`)).body)).toEqual(expected(alices, (c) => c.event.model));

    // Each run's totals on its row: the sums of its calls.
    const connection = await mysql.createConnection({ supportBigNumbers: true, bigNumberStrings: true, host: system.env.DATAAGENT_MYSQL_HOST, port: Number(system.env.DATAAGENT_MYSQL_PORT), user: system.env.DATAAGENT_MYSQL_USER, password: system.env.DATAAGENT_MYSQL_PASSWORD, database: system.env.DATAAGENT_MYSQL_DATABASE });
    try {
      for (const { runId } of runs) {
        const own = expected(all.filter((c) => c.event.run_id === runId), () => 'run').run!;
        let row: { input_tokens: string | null; output_tokens: string | null; cost: string | null } | undefined;
        await waitUntil(async () => {
          [[row]] = (await connection.query('SELECT input_tokens, output_tokens, cost FROM runs WHERE run_id = ?', [runId])) as unknown as [[typeof row]];
          return row?.cost !== null;
        });
        expect([runId, row]).toEqual([runId, { input_tokens: String(own.input_tokens), output_tokens: String(own.output_tokens), cost: own.cost }]);
      }
    } finally {
      await connection.end();
    }
  });
});

/** [day, calls, cost] per day of `calls`, in day order. */
function perDayOf(calls: Call[]): string[][] {
  return Object.entries(expected(calls, (c) => c.event.timestamp.slice(0, 10)))
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([day, sums]) => [day, String(sums.calls), sums.cost]);
}
