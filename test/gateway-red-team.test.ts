// e2e lane: alone (it compares a chat's latency under held streams with its idle figure)
import { randomUUID } from 'node:crypto';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'socket.io-client';
import { api, connectChat } from './support/chat-clients.js';
import { waitUntil } from './support/event-waits.js';
import { rawUpgrade } from './support/raw-http.js';
import { TestSystem } from './support/system.js';

/**
 * A red team's gateway holes, attacked as alice of acme, who holds only her own keys, against
 * bob of globex (multi-tenant keys `key:tenant:user`):
 * - ids a client chooses (an AG-UI thread, a useChat id, X-DataAgent-Session, an A2A context)
 *   squatted before bob uses them, and probed for whether bob uses them;
 * - a flood of streams on one key, while bob chats;
 * - a 900 KB message hidden in a history, on every dialect that takes one.
 */
const ALICE = { key: 'rt-acme-alice', tenant: 'acme', user: 'alice' };
const ALICE_OTHER_KEY = { key: 'rt-acme-alice-2', tenant: 'acme', user: 'alice' };
const BOB = { key: 'rt-globex-bob', tenant: 'globex', user: 'bob' };
const STREAMS_PER_KEY = 50;
const STREAMS_PER_USER = 80;
const GATEWAY_STREAMS = 10;
const MESSAGE_LIMIT = 64 * 1024;
/** The scripted model's answer when the message has no directive. */
const ANSWER = 'Hello from the scripted LLM server.';

describe('the gateway against a hostile user of another tenant', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({
      workers: 1,
      env: {
        DATAAGENT_MULTI_TENANT: 'true',
        DATAAGENT_API_KEYS: [ALICE, ALICE_OTHER_KEY, BOB].map((c) => `${c.key}:${c.tenant}:${c.user}`).join(','),
        DATAAGENT_MAX_STREAMS_PER_KEY: String(STREAMS_PER_KEY),
        DATAAGENT_MAX_STREAMS_PER_USER: String(STREAMS_PER_USER),
        DATAAGENT_MAX_MESSAGE_BYTES: String(MESSAGE_LIMIT),
        DATAAGENT_WORKER_CONCURRENCY: '8',
        // Alice's hanging run must outlast the flood.
        DATAAGENT_LLM_TIMEOUT_MS: '600000',
      },
      // A second gateway on the same Redis, whose own process holds few streams.
      extraGateways: [{ DATAAGENT_MAX_STREAMS_PER_GATEWAY: String(GATEWAY_STREAMS) }],
    });
  }, 120_000);
  afterAll(async () => {
    await system?.stop();
  });

  /** POSTs JSON and reads the whole answer (an SSE stream to its end). */
  async function post(path: string, key: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Headers }> {
    const res = await fetch(`${system.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers }, body: JSON.stringify(body) });
    return { status: res.status, text: await res.text(), headers: res.headers };
  }

  /** One turn in a conversation the client names `id`, as each dialect takes it; what the client sees of it. */
  interface Turn {
    status: number;
    /** The model answered. */
    answered: boolean;
    /** The id the dialect showed back (RUN_STARTED threadId, X-DataAgent-Session, contextId), where it shows one. */
    shownId?: string;
    errorCode?: string;
  }
  const errorCodeOf = (text: string): string | undefined => {
    try {
      const body = JSON.parse(text) as { error_code?: string; error?: { code?: string; data?: { error_code?: string } } };
      return body.error_code ?? body.error?.data?.error_code ?? body.error?.code;
    } catch {
      return undefined;
    }
  };
  const DIALECTS: Record<string, (key: string, id: string, text: string) => Promise<Turn>> = {
    'AG-UI threadId': async (key, id, text) => {
      const res = await post('/api/v1/ag-ui', key, { threadId: id, runId: randomUUID(), messages: [{ id: randomUUID(), role: 'user', content: text }], tools: [], context: [], state: {}, forwardedProps: {} });
      const started = /"type":"RUN_STARTED","threadId":"([^"]+)"/.exec(res.text)?.[1];
      return { status: res.status, answered: res.text.includes('"outcome":{"type":"success"') && res.text.includes('TEXT_MESSAGE_CONTENT'), shownId: started, errorCode: errorCodeOf(res.text) };
    },
    'AI SDK useChat id': async (key, id, text) => {
      const res = await post('/api/v1/ui/chat', key, { id, messages: [{ id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] }] });
      return { status: res.status, answered: res.text.includes('"type":"text-delta"') && res.text.includes('data: [DONE]'), errorCode: errorCodeOf(res.text) };
    },
    'X-DataAgent-Session': async (key, id, text) => {
      const res = await post('/v1/chat/completions', key, { model: 'default', messages: [{ role: 'user', content: text }] }, { 'x-dataagent-session': id });
      const body = res.status === 200 ? (JSON.parse(res.text) as { choices: Array<{ message: { content: string } }> }) : undefined;
      return { status: res.status, answered: body?.choices[0]?.message.content === ANSWER, shownId: res.headers.get('x-dataagent-session') ?? undefined, errorCode: errorCodeOf(res.text) };
    },
    'A2A contextId': async (key, id, text) => {
      const res = await post('/api/v1/a2a', key, { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], contextId: id } } });
      const task = (JSON.parse(res.text) as { result?: { task?: { contextId: string; status: { state: string } } } }).result?.task;
      return { status: res.status, answered: task?.status.state === 'TASK_STATE_COMPLETED', shownId: task?.contextId, errorCode: errorCodeOf(res.text) };
    },
  };
  /** The user messages of the caller's conversation named `id`, as the sessions API shows them to that caller; null when it has none. */
  async function userMessages(key: string, id: string): Promise<string[] | null> {
    const res = await api(system.url, 'GET', `/sessions/${id}/messages`, { apiKey: key });
    if (res.status === 404) return null;
    expect(res.status).toBe(200);
    return (res.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'user').map((m) => m.content);
  }

  describe('ids a client chooses', () => {
    for (const [dialect, talk] of Object.entries(DIALECTS)) {
      it(`${dialect}: alice squatting an id leaves bob's first use of it his own conversation, and tells alice nothing of bob's ids`, async () => {
        const tag = randomUUID().slice(0, 8);
        const squatted = `squat-${tag}`;
        const secret = `alice-secret-${tag}`;
        const planted = await talk(ALICE.key, squatted, secret);
        expect(planted).toMatchObject({ status: 200, answered: true });

        // Bob's first use of the id alice took: his own conversation, answered, with his id shown back and his history only.
        const bobs = await talk(BOB.key, squatted, `bob's first message ${tag}`);
        expect(bobs).toMatchObject({ status: 200, answered: true });
        if (bobs.shownId !== undefined) expect(bobs.shownId).toBe(squatted);
        expect(await userMessages(BOB.key, squatted)).toEqual([`bob's first message ${tag}`]);
        // Alice's conversation is still hers alone.
        expect(await userMessages(ALICE.key, squatted)).toEqual([secret]);

        // No oracle: an id bob uses and one nobody uses look the same to alice, read or written.
        const bobOnly = `bob-${tag}`;
        const nobodys = `nobody-${tag}`;
        expect(await talk(BOB.key, bobOnly, `bob only ${tag}`)).toMatchObject({ status: 200, answered: true });
        const read = await Promise.all([bobOnly, nobodys].map((id) => api(system.url, 'GET', `/sessions/${id}`, { apiKey: ALICE.key })));
        expect(read.map((r) => [r.status, r.body.error_code])).toEqual([
          [404, 'session_not_found'],
          [404, 'session_not_found'],
        ]);
        const written = [await talk(ALICE.key, bobOnly, `probe ${tag}`), await talk(ALICE.key, nobodys, `probe ${tag}`)];
        expect(written.map((t) => ({ status: t.status, answered: t.answered, errorCode: t.errorCode }))).toEqual([
          { status: 200, answered: true, errorCode: undefined },
          { status: 200, answered: true, errorCode: undefined },
        ]);
        expect(written.map((t) => t.shownId)).toEqual(written[0]!.shownId === undefined ? [undefined, undefined] : [bobOnly, nobodys]);
        expect(await userMessages(ALICE.key, bobOnly)).toEqual([`probe ${tag}`]);
        // Bob's conversation took nothing from alice's probe.
        expect(await userMessages(BOB.key, bobOnly)).toEqual([`bob only ${tag}`]);
      }, 60_000);
    }
  });

  describe('a history message over the message limit', () => {
    const big = 'x'.repeat(900 * 1024);
    /** Each dialect that takes a history, with a 900 KB message in it and a small last one. */
    const HISTORIES: Record<string, (id: string) => Promise<{ status: number; text: string }>> = {
      'OpenAI chat completions messages (kept with X-DataAgent-Session)': (id) =>
        post('/v1/chat/completions', ALICE.key, { model: 'default', messages: [{ role: 'user', content: big }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'hi' }] }, { 'x-dataagent-session': id }),
      'OpenAI chat completions messages (stateless)': () =>
        post('/v1/chat/completions', ALICE.key, { model: 'default', messages: [{ role: 'system', content: big }, { role: 'user', content: 'hi' }] }),
      'Responses input': () => post('/v1/responses', ALICE.key, { model: 'default', input: [{ role: 'user', content: big }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'hi' }] }),
      'AI SDK UI messages': (id) =>
        post('/api/v1/ui/chat', ALICE.key, {
          id,
          messages: [
            { id: 'm1', role: 'user', parts: [{ type: 'text', text: big }] },
            { id: 'm2', role: 'assistant', parts: [{ type: 'text', text: 'ok' }] },
            { id: 'm3', role: 'user', parts: [{ type: 'text', text: 'hi' }] },
          ],
        }),
      'AG-UI messages': (id) =>
        post('/api/v1/ag-ui', ALICE.key, {
          threadId: id,
          runId: randomUUID(),
          messages: [
            { id: 'm1', role: 'user', content: big },
            { id: 'm2', role: 'assistant', content: 'ok' },
            { id: 'm3', role: 'user', content: 'hi' },
          ],
          tools: [],
          context: [],
          state: {},
          forwardedProps: {},
        }),
    };

    it('is refused with 413 on every dialect that takes a history, and nothing is stored', async () => {
      const sessionsBefore = (await api(system.url, 'GET', '/sessions?limit=100', { apiKey: ALICE.key })).body.sessions as unknown[];
      const answers: Record<string, [number, string | undefined]> = {};
      const ids: string[] = [];
      for (const [dialect, send] of Object.entries(HISTORIES)) {
        const id = `history-${randomUUID().slice(0, 8)}`;
        ids.push(id);
        const res = await send(id);
        answers[dialect] = [res.status, errorCodeOf(res.text)];
      }
      expect(answers).toEqual(Object.fromEntries(Object.keys(HISTORIES).map((d) => [d, [413, 'message_too_large']])));
      for (const id of ids) expect(await userMessages(ALICE.key, id)).toBeNull();
      const sessionsAfter = (await api(system.url, 'GET', '/sessions?limit=100', { apiKey: ALICE.key })).body.sessions as unknown[];
      expect(sessionsAfter).toHaveLength(sessionsBefore.length);
    }, 60_000);
  });

  describe('streams held open on one key', () => {
    /** A stream attempt: the SSE of a run, held open until `close`. */
    interface Attempt {
      status: number;
      retryAfter?: string;
      body?: { error_code?: string; details?: { limit?: string; max?: number } };
      close: () => void;
    }
    function openStream(key: string, runId: string, gateway = system.url): Promise<Attempt> {
      return new Promise((resolve, reject) => {
        const url = new URL(`${gateway}/api/v1/runs/${runId}/events`);
        const req: ClientRequest = request({ host: url.hostname, port: url.port, path: url.pathname, headers: { 'x-api-key': key }, agent: false });
        req.on('error', reject);
        req.on('response', (res: IncomingMessage) => {
          const close = () => req.destroy();
          if (res.statusCode === 200) return resolve({ status: 200, close });
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body: JSON.parse(text), close }));
        });
        req.end();
      });
    }
    /** Starts alice's run that never ends (its model stream hangs) and leaves its stream once it names the run: a disconnect is not a stop. */
    async function startHangingRun(): Promise<string> {
      const leave = new AbortController();
      const res = await fetch(`${system.url}/api/v1/chat/stream`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': ALICE.key }, body: JSON.stringify({ message: '[[chunks:1]] [[hang]]' }), signal: leave.signal });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      let runId: string | undefined;
      while (!runId) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`the stream ended before naming its run: ${text}`);
        text += decoder.decode(value, { stream: true });
        runId = /"run_id":"([^"]+)"/.exec(text)?.[1];
      }
      leave.abort();
      return runId;
    }
    const p90 = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.ceil(ms.length * 0.9) - 1]!;
    async function bobsChats(n: number): Promise<number[]> {
      const took: number[] = [];
      for (let i = 0; i < n; i++) {
        const started = performance.now();
        const res = await api(system.url, 'POST', '/chat', { apiKey: BOB.key, body: { message: `bob ${i}` } });
        expect(res.status).toBe(200);
        took.push(performance.now() - started);
      }
      return took;
    }

    it("answers 429 with Retry-After past the key and person caps on every gateway, 503 past a gateway's own, gives slots back on close, and leaves bob his latency while alice holds hers", async () => {
      // Alice's run that never ends: its event stream stays open for as long as she holds it.
      const runId = await startHangingRun();

      // Bob's chats, idle and then under attack, are more than his key's cap together: each finished one gave its slot back.
      const idle = await bobsChats(30);

      // The flood: 2,000 attempts on one key, 100 at a time, each held open when let in.
      const held: Attempt[] = [];
      const refused: Attempt[] = [];
      for (let sent = 0; sent < 2_000; sent += 100) {
        const wave = await Promise.all(Array.from({ length: 100 }, () => openStream(ALICE.key, runId)));
        for (const attempt of wave) (attempt.status === 200 ? held : refused).push(attempt);
      }
      // Bob chats while alice holds all she got open. (A flood of requests, refused or not, is what
      // DATAAGENT_REQUESTS_PER_MINUTE bounds; this measures what her held streams cost bob.)
      const busy = await bobsChats(30);

      expect(held).toHaveLength(STREAMS_PER_KEY);
      expect(refused).toHaveLength(2_000 - STREAMS_PER_KEY);
      expect(new Set(refused.map((a) => `${a.status} ${a.body?.error_code} ${a.body?.details?.limit} ${a.body?.details?.max} ${a.retryAfter}`))).toEqual(new Set([`429 stream_limit streams_per_key ${STREAMS_PER_KEY} 5`]));
      for (const a of refused) expect(a.body).toEqual({ error_code: 'stream_limit', message: expect.any(String), details: { limit: 'streams_per_key', max: STREAMS_PER_KEY } });
      // Counted across gateways: the key full on the first is full on the second.
      const elsewhere = await openStream(ALICE.key, runId, system.extraGateways[0]!.url);
      elsewhere.close();
      expect([elsewhere.status, elsewhere.body?.details?.limit]).toEqual([429, 'streams_per_key']);

      // The same person on another key: what the person's cap leaves, then 429 naming it; Socket.IO and WebSocket count too.
      const other = await Promise.all(Array.from({ length: STREAMS_PER_USER - STREAMS_PER_KEY + 1 }, () => openStream(ALICE_OTHER_KEY.key, runId)));
      expect(other.filter((a) => a.status === 200)).toHaveLength(STREAMS_PER_USER - STREAMS_PER_KEY);
      expect(other.filter((a) => a.status !== 200).map((a) => [a.status, a.body?.details?.limit])).toEqual([[429, 'streams_per_user']]);
      await expect(connectChat(system.url, ALICE.key)).rejects.toMatchObject({ data: { error_code: 'stream_limit' } });
      const session = (await api(system.url, 'POST', '/sessions', { apiKey: ALICE.key, body: {} })).body.session_id as string;
      const upgrade = await rawUpgrade(system.url, `/ws/chat/${session}`, { 'x-api-key': ALICE.key });
      upgrade.socket.destroy();
      expect(upgrade.status).toBe(429);

      // Every slot comes back on close: the key's whole cap can be held again, and no more.
      for (const a of [...held, ...other, ...refused]) a.close();
      await waitUntil(async () => {
        const again = await Promise.all(Array.from({ length: STREAMS_PER_KEY + 1 }, () => openStream(ALICE.key, runId)));
        const ok = again.filter((a) => a.status === 200).length === STREAMS_PER_KEY;
        for (const a of again) a.close();
        return ok;
      }, 30_000);
      const socket: Socket = await connectChat(system.url, ALICE_OTHER_KEY.key);
      socket.disconnect();

      // A gateway process holds its own cap, whoever asks: the descriptor table is never the first wall.
      const second = system.extraGateways[0]!.url;
      const sockets = await Promise.all(Array.from({ length: GATEWAY_STREAMS }, () => connectChat(second, BOB.key)));
      try {
        await expect(connectChat(second, ALICE.key)).rejects.toMatchObject({ data: { error_code: 'gateway_full', details: { limit: 'streams_per_gateway', max: GATEWAY_STREAMS } } });
      } finally {
        for (const s of sockets) s.disconnect();
      }

      // Bob's chats while alice held her streams took at most twice his idle ones (p90 against p90).
      console.log(`bob's chat p90: idle ${p90(idle).toFixed(0)} ms, while alice held her streams ${p90(busy).toFixed(0)} ms (after ${held.length + refused.length} attempts)`);
      expect(p90(busy)).toBeLessThanOrEqual(2 * p90(idle));
    }, 180_000);
  });
});
