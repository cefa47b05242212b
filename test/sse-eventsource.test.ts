import { setTimeout as sleep } from 'node:timers/promises';
import { EventSource } from 'eventsource';
import type { Page } from 'playwright-core';
import { EVENT_TYPES, type EventDict } from '#core/events/execution-event.js';
import { TestBrowser, type WatchedPage } from './support/browser.js';
import { api, connectChat } from './support/chat-clients.js';
import { chatToDone, EventCollector, runEvent, sendChat, waitUntil } from './support/event-waits.js';
import { OTHER_API_KEY, TEST_API_KEY, TEST_API_KEYS, TestSystem } from './support/system.js';

const ADMIN_KEY = 'test-key-acme-admin';

/** The SSE names a run's events go out under: their event_type, but `run_error` for `error` (EventSource has its own `error`). */
const SSE_NAMES = EVENT_TYPES.map((type) => (type === 'error' ? 'run_error' : type));

/** What the page functions below use of the browser's globals (the project compiles without the DOM lib). */
interface PageEventSource {
  addEventListener(type: string, listener: (event: { data?: string; lastEventId?: string }) => void): void;
  close(): void;
}
declare const window: { __sse?: { events: Array<{ name: string; data: EventDict; lastEventId: string }>; errors: number; closed: boolean }; EventSource: new (url: string) => PageEventSource };

/**
 * Browsers' EventSource reconnects whenever a stream ends, unless the server answers 204. A run's
 * stream ends with its done, so the reconnect that follows (with Last-Event-ID of the done) must
 * get 204, or the client replays, reconnects and replays again forever. Driven by the
 * `eventsource` package, which follows the same rules as browsers, and by Chromium's own.
 *
 * With auth on, an EventSource cannot send X-API-Key: it opens the stream with a stream ticket
 * that the page asked for with its key. And a run's `error` events arrive as `run_error`: under
 * `error` they were mixed with EventSource's own error events, which carry no data.
 */
describe('EventSource on a run', () => {
  let system: TestSystem;
  let browser: TestBrowser;
  /** A second gateway whose tickets last a second: for the stale ticket, and to show any gateway redeems a ticket. */
  let shortTickets: string;

  beforeAll(async () => {
    [system, browser] = await Promise.all([
      TestSystem.start({
        workers: 1,
        env: { DATAAGENT_API_KEYS: `${TEST_API_KEYS},${ADMIN_KEY}:acme:carol:admin`, DATAAGENT_HITL_TIMEOUT: '120', DATAAGENT_LOG_LEVEL: 'info' },
        extraGateways: [{ DATAAGENT_STREAM_TICKET_SECONDS: '1' }],
      }),
      TestBrowser.launch(),
    ]);
    shortTickets = system.extraGateways[0].url;
  });
  afterAll(async () => {
    await browser?.close();
    await system?.stop();
  });

  interface Followed {
    /** Every request the source made: the Last-Event-ID it sent, the status it got, and whether it sent a key. */
    requests: Array<{ lastEventId: string | null; status: number; sentKey: boolean }>;
    /** Events by their SSE name, the JSON of their data. */
    received: Array<{ name: string; event: EventDict }>;
    /** EventSource's own `error` events: their data (a run's error must never come this way) and HTTP status. */
    errors: Array<{ data: unknown; code: number | undefined }>;
    closed: boolean;
  }

  /**
   * Follows `url` with an EventSource until it closes (or `waitMs` passes). `apiKey` is sent as
   * X-API-Key, as a server-side client can; without it, the URL's ticket is all the source has.
   */
  async function follow(url: string, options: { apiKey?: string; lastEventId?: string; waitMs?: number } = {}): Promise<Followed> {
    const followed: Followed = { requests: [], received: [], errors: [], closed: false };
    const source = new EventSource(url, {
      fetch: async (input, init) => {
        const headers = new Headers(init?.headers);
        if (options.apiKey) headers.set('x-api-key', options.apiKey);
        if (options.lastEventId && !headers.has('last-event-id')) headers.set('last-event-id', options.lastEventId);
        const res = await fetch(input, { ...init, headers });
        followed.requests.push({ lastEventId: headers.get('last-event-id'), status: res.status, sentKey: headers.has('x-api-key') });
        return res;
      },
    });
    for (const name of SSE_NAMES) source.addEventListener(name, (e) => followed.received.push({ name, event: JSON.parse(e.data) as EventDict }));
    source.addEventListener('error', (e) => followed.errors.push({ data: (e as unknown as { data?: unknown }).data, code: e.code }));
    const deadline = Date.now() + (options.waitMs ?? 5_000);
    while (source.readyState !== EventSource.CLOSED && Date.now() < deadline) await sleep(50);
    followed.closed = source.readyState === EventSource.CLOSED;
    source.close();
    return followed;
  }

  /** A stream ticket for the run, asked for with `apiKey` at `baseUrl`. */
  async function ticketFor(runId: string, apiKey = TEST_API_KEY, baseUrl = system.url): Promise<{ ticket: string; url: string; expires_in: number; expires_at: string }> {
    const answer = await api(baseUrl, 'POST', `/runs/${runId}/stream-tickets`, { apiKey });
    expect([answer.status, answer.body]).toEqual([201, expect.objectContaining({ run_id: runId })]);
    return answer.body;
  }

  /** Opens the run's stream with a plain GET carrying `query` (and no key): its status and error code. */
  async function open(runId: string, query: string, baseUrl = system.url): Promise<{ status: number; error_code?: string }> {
    const res = await fetch(`${baseUrl}/api/v1/runs/${runId}/events?${query}`);
    const text = await res.text();
    return res.headers.get('content-type')?.includes('json') ? { status: res.status, error_code: (JSON.parse(text) as { error_code: string }).error_code } : { status: res.status };
  }

  it('stops after the done: the reconnect with the done as Last-Event-ID gets 204 and the source closes', async () => {
    const run = await chatToDone(system.url, TEST_API_KEY, 'hello there');
    const runId = String(run[0]!.run_id);
    const done = run.at(-1)!;
    const url = `${system.url}/api/v1/runs/${runId}/events`;

    const whole = await follow(url, { apiKey: TEST_API_KEY });
    expect(whole.closed).toBe(true);
    expect(whole.received.map((r) => r.event.seq)).toEqual(run.map((e) => e.seq));
    expect(whole.requests).toEqual([
      { lastEventId: null, status: 200, sentKey: true },
      { lastEventId: `${runId}:${done.seq}`, status: 204, sentKey: true },
    ]);

    const caughtUp = await follow(url, { apiKey: TEST_API_KEY, lastEventId: `${runId}:${done.seq}` });
    expect(caughtUp).toMatchObject({ requests: [{ lastEventId: `${runId}:${done.seq}`, status: 204 }], received: [], closed: true });
  });

  it('follows a live run with a stream ticket and no key: reconnects reuse the ticket while it lasts', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: '[[chunks:30]] [[slow:40]]' });
      const issued = await ticketFor(ack.run_id);
      expect(issued.ticket).toMatch(/^dast_[A-Za-z0-9_-]{43}$/);
      expect(issued.url).toBe(`/api/v1/runs/${ack.run_id}/events?ticket=${issued.ticket}`);
      expect(issued.expires_in).toBe(60);
      expect(Date.parse(issued.expires_at) - Date.now()).toBeGreaterThan(50_000);

      const followed = await follow(`${system.url}${issued.url}`, { waitMs: 15_000 });
      const done = await events.done(ack.run_id);
      expect(followed.closed).toBe(true);
      expect(followed.received.map((r) => r.event)).toEqual(events.ofRun(ack.run_id));
      // The stream ended with the done; EventSource reconnected by itself, with the same URL, and the ticket let it hear 204.
      expect(followed.requests).toEqual([
        { lastEventId: null, status: 200, sentKey: false },
        { lastEventId: `${ack.run_id}:${done.seq}`, status: 204, sentKey: false },
      ]);
      // The ticket never reaches a log line; the request log names the stream without it.
      const logged = [...system.gateway.output, ...system.extraGateways[0].output].join('\n');
      expect(logged).not.toContain(issued.ticket);
      expect(logged).toContain(`/api/v1/runs/${ack.run_id}/events?ticket=***`);
    } finally {
      socket.disconnect();
    }
  });

  it("delivers a run's error as run_error with its data, apart from EventSource's own error events", async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: '[[error:400]]' });
      const runError = await events.next(runEvent(ack.run_id, 'error'));
      await events.done(ack.run_id);
      const followed = await follow(`${system.url}${(await ticketFor(ack.run_id)).url}`);
      expect(followed.received.filter((r) => r.name === 'run_error')).toEqual([{ name: 'run_error', event: runError }]);
      expect(runError).toMatchObject({ event_type: 'error', recoverable: false });
      expect(followed.received.map((r) => r.event)).toEqual(events.ofRun(ack.run_id));
      // EventSource's own errors (the stream's end, then the 204 that closes it) carry no data; the run's error is not among them.
      expect(followed.errors).toEqual([
        { data: undefined, code: undefined },
        { data: undefined, code: 204 },
      ]);
    } finally {
      socket.disconnect();
    }
  });

  it('refuses a stale, made-up or foreign ticket, one whose key was revoked, and a ticket or key anywhere else', async () => {
    const mine = String((await chatToDone(system.url, TEST_API_KEY, 'mine'))[0].run_id);
    const another = String((await chatToDone(system.url, TEST_API_KEY, 'another of mine'))[0].run_id);
    const bobs = String((await chatToDone(system.url, OTHER_API_KEY, 'bob'))[0].run_id);
    const { ticket } = await ticketFor(mine);

    // Within its lifetime it opens its stream again, as EventSource's reconnects need.
    expect(await open(mine, `ticket=${ticket}`)).toEqual({ status: 200 });
    expect(await open(mine, `ticket=${ticket}&after_seq=1`)).toEqual({ status: 200 });
    // Bound to one stream: not another run of the same user, not someone else's.
    expect(await open(another, `ticket=${ticket}`)).toEqual({ status: 403, error_code: 'stream_ticket_wrong_stream' });
    expect(await open(bobs, `ticket=${ticket}`)).toEqual({ status: 403, error_code: 'stream_ticket_wrong_stream' });
    // Only the run's owner gets a ticket for it.
    expect((await api(system.url, 'POST', `/runs/${mine}/stream-tickets`, { apiKey: OTHER_API_KEY })).status).toBe(404);
    expect((await api(system.url, 'POST', `/runs/${mine}/stream-tickets`)).status).toBe(401);
    expect((await fetch(`${system.url}/api/v1/runs/${mine}/stream-tickets?ticket=${ticket}`, { method: 'POST' })).status).toBe(401);
    // Made up, or no ticket at all.
    expect(await open(mine, `ticket=dast_${'A'.repeat(43)}`)).toEqual({ status: 401, error_code: 'invalid_stream_ticket' });
    expect(await open(mine, `ticket=${ticket}&ticket=${ticket}`)).toEqual({ status: 401, error_code: 'invalid_stream_ticket' });
    expect(await open(mine, 'after_seq=0')).toEqual({ status: 401, error_code: 'missing_api_key' });
    // A key never goes into a URL, and a ticket opens no other route.
    expect(await open(mine, `api_key=${TEST_API_KEY}`)).toEqual({ status: 401, error_code: 'missing_api_key' });
    expect((await fetch(`${system.url}/api/v1/sessions?ticket=${ticket}`)).status).toBe(401);

    // Stale: this gateway's tickets last a second. Tickets live in Redis, so either gateway takes one while it lasts.
    const short = await ticketFor(mine, TEST_API_KEY, shortTickets);
    expect(short.expires_in).toBe(1);
    expect(await open(mine, `ticket=${short.ticket}`)).toEqual({ status: 200 });
    // The ticket's second is the behaviour: asked until it is refused, with a deadline far past it.
    await waitUntil(async () => (await open(mine, `ticket=${short.ticket}`, shortTickets)).status !== 200, 5_000);
    expect(await open(mine, `ticket=${short.ticket}`, shortTickets)).toEqual({ status: 401, error_code: 'invalid_stream_ticket' });
    expect(await open(mine, `ticket=${short.ticket}`)).toEqual({ status: 401, error_code: 'invalid_stream_ticket' });

    // A ticket ends with its key.
    const issued = await api(system.url, 'POST', '/admin/api-keys', { apiKey: ADMIN_KEY, body: { user_id: 'dave' } });
    expect(issued.status).toBe(201);
    const daves = String((await chatToDone(system.url, issued.body.key, 'dave'))[0].run_id);
    const davesTicket = (await ticketFor(daves, issued.body.key)).ticket;
    expect(await open(daves, `ticket=${davesTicket}`)).toEqual({ status: 200 });
    expect((await api(system.url, 'DELETE', `/admin/api-keys/${issued.body.key_id}`, { apiKey: ADMIN_KEY })).status).toBe(200);
    expect(await open(daves, `ticket=${davesTicket}`)).toEqual({ status: 401, error_code: 'invalid_stream_ticket' });
  });

  describe('in Chromium', () => {
    let watched: WatchedPage;
    let page: Page;

    beforeEach(async () => {
      watched = await browser.open(system.url);
      page = watched.page;
      // A page of the gateway's origin that is not the web UI: what runs in it is this test's alone.
      await page.goto('/api/v1/health/live');
    });
    afterEach(async () => {
      await watched.close();
      expect(watched.foreignRequests()).toEqual([]);
    });

    /** In the page: asks for a ticket with the key, then follows the run with the browser's own EventSource until done. */
    const followInPage = (runId: string) =>
      page.evaluate(
        async ({ runId, key, names }) => {
          const answer = await fetch(`/api/v1/runs/${runId}/stream-tickets`, { method: 'POST', headers: { 'x-api-key': key } });
          if (answer.status !== 201) throw new Error(`stream-tickets answered ${answer.status}: ${await answer.text()}`);
          const { url } = (await answer.json()) as { url: string };
          const state = { events: [] as Array<{ name: string; data: EventDict; lastEventId: string }>, errors: 0, closed: false };
          window.__sse = state;
          // The browser's own EventSource (the name EventSource in this file is the package's).
          const source = new window.EventSource(url);
          for (const name of names) {
            source.addEventListener(name, (e) => {
              state.events.push({ name, data: JSON.parse(e.data!) as EventDict, lastEventId: e.lastEventId ?? '' });
              if (name === 'done') {
                source.close();
                state.closed = true;
              }
            });
          }
          source.addEventListener('error', () => state.errors++);
        },
        { runId, key: TEST_API_KEY, names: SSE_NAMES },
      );
    const pageState = () => page.evaluate(() => window.__sse!);

    it("follows a run with the page's own EventSource and a ticket, with auth on: live events, an approval, the end", async () => {
      const socket = await connectChat(system.url, TEST_API_KEY);
      const events = new EventCollector(socket);
      try {
        const ack = await sendChat(socket, { message: '[[tool:write_file {"path":"sse/browser.txt","content":"from the browser"}]]' });
        await followInPage(ack.run_id);
        // The run waits for a person: the page has everything up to the question, live.
        await page.waitForFunction(() => window.__sse!.events.some((e) => e.name === 'hitl_request'));
        const asked = (await pageState()).events.find((e) => e.name === 'hitl_request')!.data as EventDict & { request_id: string };
        expect((await api(system.url, 'POST', `/hitl/${asked.request_id}`, { apiKey: TEST_API_KEY, body: { decision: 'approve' } })).status).toBe(200);
        await page.waitForFunction(() => window.__sse!.closed);
        await events.done(ack.run_id);

        const state = await pageState();
        expect(state.events.map((e) => e.data)).toEqual(events.ofRun(ack.run_id));
        expect(state.events.map((e) => e.name)).toEqual(expect.arrayContaining(['tool_call', 'hitl_request', 'file_operation', 'tool_result', 'done']));
        expect(state.events.every((e) => e.lastEventId === `${ack.run_id}:${e.data.seq}`)).toBe(true);
        expect(state.errors).toBe(0);
      } finally {
        socket.disconnect();
      }
    });

    it('hears a failed run as run_error, with its data', async () => {
      const socket = await connectChat(system.url, TEST_API_KEY);
      const events = new EventCollector(socket);
      try {
        const ack = await sendChat(socket, { message: '[[error:400]]' });
        await followInPage(ack.run_id);
        await page.waitForFunction(() => window.__sse!.closed);
        const runError = await events.next(runEvent(ack.run_id, 'error'));
        const state = await pageState();
        expect(state.events.filter((e) => e.name === 'run_error').map((e) => e.data)).toEqual([runError]);
        expect(state.errors).toBe(0);
      } finally {
        socket.disconnect();
      }
    });
  });
});
