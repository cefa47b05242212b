/**
 * Structured fuzzing of every way in: REST bodies, queries and headers on every route, Socket.IO
 * messages and handshakes (through the client and as raw engine.io packets), plain WebSocket
 * upgrades and hand-made frames, SSE reconnects, and the arguments a model gives the built-in
 * tools. Every input goes to loopback only.
 *
 * Each category is one `it` made of several fast-check properties with fixed seeds (FUZZ_SEED,
 * printed); a failing property is shrunk to a minimal input and reported, and the category goes
 * on with its next property. A gateway that dies or stops answering is recorded with the input
 * that did it and restarted, so shrinking can find the smallest killer and later categories still
 * run. The last `it` checks what must hold after all of it (DESIGN.md invariants 1, 2, 4, 5, 6):
 * every process up, health 200, no 5xx but a deliberate 503, every run ended by exactly one done,
 * nothing stored before the fuzzing lost, no session subscription left behind, no secret in any
 * answer, event or log line, and at least 10,000 inputs tried.
 *
 * FUZZ_SEED=n picks another seed; FUZZ_SCALE=k multiplies the number of inputs.
 */
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import { redisKeys } from '#transport/redis-keys.js';
import { io, type Socket } from 'socket.io-client';
import type { EventDict, HitlRequestEventDict } from '#core/events/execution-event.js';
import type { AppProcess } from './support/app-processes.js';
import {
  CONTENT_TYPES, POLLUTION_MARKER, bodyBytes, bodySpec, deepJson, frameBytes, frameGen, frameIsValid, jsonArbitraries, jsonTree, numberLike, obj, objectBody, oddString,
  pathParam, queryString, safeForUri, toJs, toJsonText, type BodySpec, type FrameGen, type Json, type JsonArbitraries,
} from './support/fuzz-arbitraries.js';
import { FuzzLedger, LogTap, SecretScanner, checkProperty, deadline, hex } from './support/fuzz-harness.js';
import { argsText, assertCallLoopbackOnly, leavesWorkspace, targetAnswer, toolCallGroups, type ToolCall } from './support/fuzz-tools.js';
import { RawWsClient, closeInfo, decodeFrames, drain, header, parseSse, rawHttp, rawUpgrade } from './support/fuzz-wire.js';
import { TestSystem } from './support/system.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20_251_123);
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));

const ALICE = `fz-alice-${randomBytes(10).toString('hex')}`;
const BOB = `fz-bob-${randomBytes(10).toString('hex')}`;
const LLM_KEY = `sk-fuzz-${randomBytes(12).toString('hex')}`;
const TOOL_TIMEOUT_MS = 1_500;
const MAX_SEQ = 4_294_967_295;
/** Written into files outside the workspace: it must never come back from a tool. */
const CANARY = `canary${randomBytes(8).toString('hex')}`;
/** The name of a file that exists only outside the workspace: a listing that shows it escaped. */
const OUTSIDE_ONLY = `outsideonly${randomBytes(6).toString('hex')}`;
/** Marks a path parameter that is sent by the user who does not own it. */
const FOREIGN = '__fzforeign__';

/** A 5xx is a failure unless it is the deliberate "full, retry later" 503. */
const statusOk = (status: number, code: unknown) => status < 500 || (status === 503 && code === 'over_capacity');

interface RestInput {
  route: string;
  method: string;
  target: string;
  auth: Array<[string, string]>;
  contentType: string | null;
  extra: Array<[string, string]>;
  body: BodySpec;
  chunked: boolean;
}

describe('fuzzing every entry point', () => {
  let system: TestSystem;
  const ledger = new FuzzLedger();
  const scanner = new SecretScanner({ ALICE_API_KEY: ALICE, BOB_API_KEY: BOB, OPENAI_API_KEY: LLM_KEY, MYSQL_PASSWORD: process.env.DATAAGENT_MYSQL_PASSWORD });
  const taps: LogTap[] = [];
  const startedAt = Date.now();
  let fuzzRoot: string;
  let wsRoot: string;
  let outsideBefore: Map<string, string>;
  let target: { server: Server; port: number; hits: number };
  let canary: { server: Server; port: number; hits: string[] };
  let propertyIndex = 0;
  const seedFor = () => SEED + ++propertyIndex;

  /** What existed before the fuzzing and must still be there, unchanged, after it. */
  const preserved: { sessions: Record<string, { key: string; view: unknown; messages: unknown }>; runs: Record<string, EventDict[]> } = { sessions: {}, runs: {} };
  const ids = { aliceSessions: [] as string[], bobSession: '', aliceRuns: [] as string[], bobRun: '', scratch: [] as string[], wsSession: '', hitlRequest: '', hitlSession: '' };
  /** Sessions a fuzzed DELETE removed (their runs go with them, as documented). */
  const deletedSessions = new Set<string>();

  const port = () => system.gateway.port;
  /** Socket.IO clients still open, closed in afterAll whatever happened. */
  const clientSockets = new Set<Socket>();

  // -------------------------------------------------------------------------------------------
  // Processes: taps on their output, death and restart

  function tap(name: string, proc: AppProcess): void {
    taps.push(new LogTap(name, proc.proc, scanner));
  }

  const dead = (p: AppProcess) => p.proc.exitCode !== null || p.proc.signalCode !== null;

  /**
   * Null while the gateway answers its health check. If it died or hangs, records that against
   * the input, restarts it (so the property can go on shrinking) and says what happened.
   */
  async function gatewayProblem(category: string, input: () => string): Promise<string | null> {
    const gw = system.gateway;
    let problem: string | null = null;
    if (!dead(gw)) {
      const probe = await rawHttp(gw.port, { method: 'GET', target: '/api/v1/health' }, { timeoutMs: 5_000 });
      if (probe.status === 200) return null;
      // Dying or hung: a dying gateway's exit comes soon; a hung one's never does (the bound is only for that case).
      if (!dead(gw)) await Promise.race([once(gw.proc, 'exit'), sleep(2_000)]);
      if (!dead(gw)) problem = `gateway stopped answering (health: ${probe.status || probe.error || 'timeout'})`;
    }
    problem ??= `gateway died (exit ${gw.proc.exitCode}, signal ${gw.proc.signalCode})`;
    const lastTap = taps.filter((t) => t.name.startsWith('gateway')).at(-1);
    ledger.crashes.push(`${category}: ${problem} after input ${input().slice(0, 1_500)}\n    last gateway error lines:\n      ${(lastTap?.errors() ?? []).join('\n      ').slice(0, 3_000)}`);
    if (!dead(gw)) await gw.kill();
    await system.restartGateway();
    tap(`gateway#${taps.length}`, system.gateway);
    return problem;
  }

  async function workersProblem(category: string, input: () => string): Promise<string | null> {
    const gone = system.workers.filter(dead);
    if (gone.length === 0) return null;
    for (const w of gone) {
      ledger.crashes.push(`${category}: worker died (exit ${w.proc.exitCode}, signal ${w.proc.signalCode}) after input ${input().slice(0, 1_500)}`);
      system.workers.splice(system.workers.indexOf(w), 1);
    }
    while (system.workers.length < 1) tap(`worker#${taps.length}`, await system.addWorker());
    return `${gone.length} worker(s) died`;
  }

  // -------------------------------------------------------------------------------------------
  // Clients with deadlines

  async function json(method: string, path: string, key: string | null, body?: unknown, timeoutMs = 30_000): Promise<{ status: number; body: any }> {
    const headers: Array<[string, string]> = [];
    if (key) headers.push(['X-API-Key', key]);
    if (body !== undefined) headers.push(['Content-Type', 'application/json']);
    const res = await rawHttp(port(), { method, target: `/api/v1${path}`, headers, body: body === undefined ? undefined : JSON.stringify(body) }, { timeoutMs, streamMs: timeoutMs });
    const text = res.body.toString('utf8');
    try {
      return { status: res.status, body: JSON.parse(text) };
    } catch {
      return { status: res.status, body: text };
    }
  }

  function sioConnect(options: { auth?: unknown; headers?: Record<string, string> }, timeoutMs = 5_000): Promise<{ socket: Socket } | { error: Error & { data?: any; timeout?: boolean; closed?: boolean } }> {
    const socket = io(`${system.url}/chat`, { transports: ['websocket'], auth: options.auth as Record<string, unknown>, extraHeaders: options.headers, reconnection: false, forceNew: true, timeout: timeoutMs });
    clientSockets.add(socket);
    socket.on('disconnect', () => clientSockets.delete(socket));
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        socket.close();
        resolve({ error: Object.assign(new Error(`no connect or connect_error within ${timeoutMs} ms`), { timeout: true }) });
      }, timeoutMs);
      socket.once('connect', () => (clearTimeout(timer), resolve({ socket })));
      socket.once('connect_error', (error) => (clearTimeout(timer), socket.close(), resolve({ error })));
      // The server may drop a malformed handshake without a word: the transport just closes.
      socket.io.on('close', (reason) => {
        // 'forced close' is the client closing itself on a connect_error, which follows.
        if (socket.connected || reason === 'forced close') return;
        clearTimeout(timer);
        socket.close();
        resolve({ error: Object.assign(new Error(`connection closed before connect: ${reason}`), { closed: true }) });
      });
    });
  }

  async function aliceSocket(): Promise<Socket> {
    const r = await sioConnect({ auth: { apiKey: ALICE } });
    if (!('socket' in r)) throw new Error(`cannot connect as alice: ${r.error.message}`);
    return r.socket;
  }

  /** The complete log of a finished run, replayed over SSE and checked well formed. */
  async function fullLog(runId: string, key = ALICE): Promise<EventDict[]> {
    const res = await rawHttp(port(), { method: 'GET', target: `/api/v1/runs/${runId}/events`, headers: [['X-API-Key', key]] }, { timeoutMs: 30_000, streamMs: 30_000 });
    const events = parseSse(res.body.toString('utf8')).map((f) => JSON.parse(f.data) as EventDict);
    const problem = wellFormed(events);
    if (problem) throw new Error(`log of ${runId}: ${problem}`);
    return events;
  }

  /** Why a run's events are not a whole run (seq 1..n, exactly one done and it is last, one run), or null. */
  function wellFormed(events: EventDict[]): string | null {
    for (let i = 0; i < events.length; i++) if (events[i].seq !== i + 1) return `seq [${events.map((e) => e.seq).join(',').slice(0, 200)}] not 1..n`;
    const dones = events.filter((e) => e.event_type === 'done').length;
    if (dones !== 1 || events.at(-1)?.event_type !== 'done') return `${dones} done events, the last event is ${events.at(-1)?.event_type}`;
    if (new Set(events.map((e) => e.run_id)).size !== 1) return 'events of several runs';
    return null;
  }

  async function database<T>(work: (db: mysql.Connection) => Promise<T>): Promise<T> {
    const env = system.env;
    const db = await mysql.createConnection({ host: env.DATAAGENT_MYSQL_HOST, port: Number(env.DATAAGENT_MYSQL_PORT), user: env.DATAAGENT_MYSQL_USER, password: env.DATAAGENT_MYSQL_PASSWORD, database: env.DATAAGENT_MYSQL_DATABASE });
    try {
      return await work(db);
    } finally {
      await db.end();
    }
  }

  /** This system's run channels still subscribed in Redis after a 5 s grace (none should be, with no client left). */
  async function leakedChannels(): Promise<string[]> {
    const [rows] = (await database((db) => db.query('SELECT run_id FROM runs'))) as unknown as [Array<{ run_id: string }>];
    const mine = new Set(rows.map((r) => redisKeys.runChannel(r.run_id)));
    const redis = new Redis(process.env.DATAAGENT_REDIS_URL!, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      let leaked: string[] = [];
      const until = Date.now() + 5_000;
      do {
        leaked = ((await redis.pubsub('CHANNELS', 'da:run:*')) as string[]).filter((c) => mine.has(c));
        if (leaked.length) await sleep(100);
      } while (leaked.length && Date.now() < until);
      return leaked;
    } finally {
      redis.disconnect();
    }
  }

  // -------------------------------------------------------------------------------------------
  // Loopback servers for the outbound tools, and the files around the workspace

  async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; port: number }> {
    const server = createServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { server, port: (server.address() as AddressInfo).port };
  }

  const closeServer = async (s?: Server) => {
    if (!s) return;
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  };

  /** Files outside the workspaces, with a digest of each (symlinks by target): they must not change. */
  function outsideTree(): Map<string, string> {
    const out = new Map<string, string>();
    const skip = [join(fuzzRoot, 'storage'), join(fuzzRoot, 'deep', 'a', 'b', 'c', 'ws')];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (skip.includes(p)) continue;
        const st = lstatSync(p);
        if (st.isSymbolicLink()) out.set(relative(fuzzRoot, p), `link:${readlinkSync(p)}`);
        else if (st.isDirectory()) {
          out.set(`${relative(fuzzRoot, p)}/`, 'dir');
          walk(p);
        } else out.set(relative(fuzzRoot, p), createHash('sha256').update(readFileSync(p)).digest('hex'));
      }
    };
    walk(fuzzRoot);
    return out;
  }

  /** Fails the category with every failure and crash recorded since it began. */
  const newFailures = (failuresFrom: number, crashesFrom: number) => [...ledger.failures.slice(failuresFrom), ...ledger.crashes.slice(crashesFrom).map((c) => `CRASH ${c}`)];

  // -------------------------------------------------------------------------------------------

  beforeAll(async () => {
    fuzzRoot = mkdtempSync(join(tmpdir(), 'da-fuzz-'));
    const canaryHits: string[] = [];
    canary = { ...(await listen((req, res) => (canaryHits.push(`${req.method} ${req.url}`), res.end('canary')))), hits: canaryHits };
    target = { ...(await listen((req, res) => targetAnswer(req, res, () => canary.port, TOOL_TIMEOUT_MS * 3))), hits: 0 };
    target.server.on('request', () => target.hits++);

    // Canary files around the workspace, a name that exists only outside it, and symlinks from inside pointing out.
    const wsParent = join(fuzzRoot, 'deep', 'a', 'b', 'c', 'ws');
    wsRoot = join(wsParent, 'alice');
    for (const dir of ['files/sub', 'uploads', 'outputs']) mkdirSync(join(wsRoot, dir), { recursive: true });
    mkdirSync(join(fuzzRoot, 'deep', 'outside-dir'), { recursive: true });
    for (const dir of ['', 'deep', 'deep/a', 'deep/a/b', 'deep/a/b/c', 'deep/a/b/c/ws', 'deep/outside-dir']) {
      writeFileSync(join(fuzzRoot, dir, 'outside-secret.txt'), `${CANARY}\n`);
      writeFileSync(join(fuzzRoot, dir, `${OUTSIDE_ONLY}.txt`), `${CANARY}\n`);
    }
    writeFileSync(join(wsRoot, 'files', 'notes.txt'), 'hello\nworld\nsecond line with é and 😀\n');
    writeFileSync(join(wsRoot, 'files', 'redos.txt'), `${'a'.repeat(34)}!\n${'x'.repeat(34)}\n${'a'.repeat(1_999)}!\n${' '.repeat(40)}\u0001\n`);
    writeFileSync(join(wsRoot, 'files', 'data.csv'), 'a,b,c\n1,2,3\n');
    writeFileSync(join(wsRoot, 'files', 'sub', 'deep.txt'), 'deep file\n');
    symlinkSync(join(fuzzRoot, 'deep', 'outside-secret.txt'), join(wsRoot, 'files', 'link-out'));
    symlinkSync(join(fuzzRoot, 'deep', 'outside-dir'), join(wsRoot, 'files', 'dir-out'));
    symlinkSync('../../../../outside-secret.txt', join(wsRoot, 'files', 'rel-link-out'));
    outsideBefore = outsideTree();

    system = await TestSystem.start({
      workers: 1,
      env: {
        DATAAGENT_API_KEYS: `${ALICE}:acme:alice,${BOB}:acme:bob`,
        OPENAI_API_KEY: LLM_KEY,
        // Production's default level: every request is logged, so every line is scanned for secrets.
        DATAAGENT_LOG_LEVEL: 'info',
        // Only write_todos asks for approval: the seeded run waits on one, everything else runs.
        DATAAGENT_HITL_TOOLS: 'write_todos',
        DATAAGENT_HITL_TIMEOUT: '90',
        DATAAGENT_TOOL_TIMEOUT_MS: String(TOOL_TIMEOUT_MS),
        DATAAGENT_MAX_TOOL_CALLS: '12',
        DATAAGENT_OUTBOUND_ALLOWLIST: `127.0.0.1:${target.port}`,
        DATAAGENT_STORAGE_ROOT: join(fuzzRoot, 'storage'),
        DATAAGENT_WORKSPACE_ROOT: join(wsParent, '{user_id}'),
        DATAAGENT_WORKSPACE_QUOTA: '50MB',
        DATAAGENT_JOB_LOCK_MS: '4000',
        // Thousands of messages on a few sockets: flood protection is not what this suite tests.
        DATAAGENT_CLIENT_MESSAGES_PER_SECOND: '100000',
      },
    });
    tap('gateway#0', system.gateway);
    tap('worker#0', system.workers[0]);

    // History that must survive: two sessions of alice's, one of bob's.
    const chat = async (key: string, message: string, sessionId?: string) => {
      const res = await json('POST', '/chat', key, { message, ...(sessionId ? { session_id: sessionId } : {}) });
      if (res.status !== 200) throw new Error(`seeding chat answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
      return res.body as { session_id: string; run_id: string };
    };
    const a1 = await chat(ALICE, 'first stored chat: 你好, ¿qué tal? 😀');
    await chat(ALICE, 'second turn in the same session', a1.session_id);
    const a2 = await chat(ALICE, 'another stored session [[chunks:5]]');
    const b1 = await chat(BOB, "bob's stored chat");
    ids.aliceSessions = [a1.session_id, a2.session_id];
    ids.bobSession = b1.session_id;
    ids.aliceRuns = [a1.run_id, a2.run_id];
    ids.bobRun = b1.run_id;
    for (const [sid, key] of [[a1.session_id, ALICE], [a2.session_id, ALICE], [b1.session_id, BOB]] as const) {
      preserved.sessions[sid] = { key, view: (await json('GET', `/sessions/${sid}`, key)).body, messages: (await json('GET', `/sessions/${sid}/messages?limit=1000`, key)).body };
    }
    for (const runId of ids.aliceRuns) preserved.runs[runId] = await fullLog(runId);
    for (let i = 0; i < 4; i++) ids.scratch.push((await json('POST', '/sessions', ALICE, { title: `scratch ${i}` })).body.session_id);
    ids.wsSession = (await json('POST', '/sessions', ALICE, { title: 'ws target' })).body.session_id;
    for (const r of [...ids.aliceRuns, ids.bobRun]) ledger.run(r);

    // A run waiting for approval, so decisions have something real to hit.
    const socket = await aliceSocket();
    try {
      const hitl = new Promise<HitlRequestEventDict>((r) => socket.on('event', (e: EventDict) => e.event_type === 'hitl_request' && r(e)));
      const ack = await socket.timeout(10_000).emitWithAck('message', { type: 'chat', payload: { message: '[[tool:write_todos {"todos":[{"content":"fuzz","status":"pending"}]}]]' } });
      ledger.run(ack.run_id, ack.session_id);
      ids.hitlRequest = (await deadline(hitl, 20_000, 'hitl_request of the seeded run')).request_id;
      ids.hitlSession = ack.session_id;
    } finally {
      socket.disconnect();
    }
  }, 180_000);

  afterAll(async () => {
    const lines = [
      '',
      `================ fuzz summary: seed ${SEED} (FUZZ_SEED), scale ${SCALE}, ${((Date.now() - startedAt) / 1000).toFixed(1)} s ================`,
      ledger.summary(),
      `runs started (ids seen in answers, acks and events): ${ledger.runIds.size}`,
      ...ledger.notes,
      ...(ledger.crashes.length ? ['CRASHES:', ...ledger.crashes] : []),
      ...(scanner.hits.length ? ['SECRETS FOUND:', ...scanner.hits] : []),
      ...(ledger.failures.length ? ['FAILURES:', ...ledger.failures] : []),
      '',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    for (const s of clientSockets) s.close();
    await system?.stop();
    await Promise.all([closeServer(target?.server), closeServer(canary?.server)]);
    if (fuzzRoot) rmSync(fuzzRoot, { recursive: true, force: true });
  });

  // ===========================================================================================
  // REST

  it('REST: every route takes odd bodies, queries, headers and path parameters without a 5xx, a hang or a leak', async () => {
    const failuresFrom = ledger.failures.length;
    const crashesFrom = ledger.crashes.length;
    const validMessage = fc.constantFrom<Json>('hi', 'fuzz chat é😀', 'x', ' ', 'with <b>tags</b> and \\u0000 escapes');
    const sessionRef = fc.oneof({ weight: 3, arbitrary: fc.constantFrom<Json>(...ids.scratch) }, { weight: 1, arbitrary: fc.constantFrom<Json>(ids.bobSession, 'no-such-session', ids.hitlSession) });
    const methods = (usual: string) => fc.oneof({ weight: 12, arbitrary: fc.constant(usual) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'get', 'PROPFIND', 'M-SEARCH') });
    const sessionParam = (forDelete: boolean) =>
      fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...ids.scratch) },
        // A DELETE names stored sessions only as the other user, who must fail.
        { weight: 2, arbitrary: forDelete ? fc.constantFrom(`${FOREIGN}bob:${ids.aliceSessions[0]}`, `${FOREIGN}alice:${ids.bobSession}`) : fc.constantFrom(...ids.aliceSessions, ids.bobSession) },
        { weight: 3, arbitrary: pathParam },
      );
    const runParam = fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...ids.aliceRuns, ids.bobRun) }, { weight: 2, arbitrary: pathParam });
    type RouteSpec = { method: fc.Arbitrary<string>; path: fc.Arbitrary<string>; query: string[]; body: fc.Arbitrary<Json>; runs: number };
    /** Every route, with bodies built from `J` (with or without prototype keys). */
    const routeSpecs = ({ objectBody, field, tree: jsonTree }: JsonArbitraries): Record<string, RouteSpec> => {
    const chatBody = objectBody({ message: field(validMessage, 2), session_id: field(sessionRef), assistant_id: field(fc.constantFrom<Json>('default')) });
    return {
      chat: { method: methods('POST'), path: fc.constant('/api/v1/chat'), query: ['stream', 'session_id'], body: chatBody, runs: 110 },
      'chat/stream': { method: methods('POST'), path: fc.constant('/api/v1/chat/stream'), query: ['after_seq'], body: chatBody, runs: 110 },
      cancel: { method: methods('POST'), path: sessionParam(false).map((s) => `/api/v1/chat/${s}/cancel`), query: ['force'], body: objectBody({ session_id: field(sessionRef) }), runs: 230 },
      'runs/events': { method: methods('GET'), path: runParam.map((r) => `/api/v1/runs/${r}/events`), query: ['after_seq', 'last_event_id'], body: jsonTree, runs: 230 },
      hitl: {
        method: methods('POST'),
        path: fc.oneof({ weight: 1, arbitrary: fc.constant(ids.hitlRequest) }, { weight: 3, arbitrary: pathParam }).map((r) => `/api/v1/hitl/${r}`),
        query: ['decision'],
        body: objectBody({ decision: field(fc.constantFrom<Json>('approve', 'reject', 'approve_all')), message: field(validMessage) }),
        runs: 230,
      },
      'sessions list': { method: methods('GET'), path: fc.constant('/api/v1/sessions'), query: ['limit', 'offset'], body: jsonTree, runs: 230 },
      'sessions create': { method: methods('POST'), path: fc.constant('/api/v1/sessions'), query: ['title'], body: objectBody({ title: field(validMessage), assistant_id: field(fc.constantFrom<Json>('default')), metadata: jsonTree }), runs: 230 },
      'session get': { method: methods('GET'), path: sessionParam(false).map((s) => `/api/v1/sessions/${s}`), query: ['fields'], body: jsonTree, runs: 230 },
      'session delete': { method: methods('DELETE'), path: sessionParam(true).map((s) => `/api/v1/sessions/${s}`), query: ['force'], body: jsonTree, runs: 230 },
      messages: { method: methods('GET'), path: sessionParam(false).map((s) => `/api/v1/sessions/${s}/messages`), query: ['limit', 'offset'], body: jsonTree, runs: 230 },
      memory: { method: methods('DELETE'), path: fc.oneof(fc.constantFrom('alice', 'bob', 'ALICE', 'alice%20', '..', 'acme'), pathParam).map((u) => `/api/v1/users/${u}/memory`), query: ['assistant_id'], body: jsonTree, runs: 230 },
      agents: { method: methods('GET'), path: fc.constant('/api/v1/agents'), query: ['limit'], body: jsonTree, runs: 230 },
      health: { method: methods('GET'), path: fc.constantFrom('/api/v1/health', '/api/v1/health/', '/api/v1//health', '/API/V1/HEALTH'), query: ['verbose'], body: jsonTree, runs: 150 },
      'unknown paths under /api/v1': {
        method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'CONNECT'),
        path: fc.oneof(fc.constantFrom('/api/v1', '/api/v1/', '/api/v1/sessions/a/b/c', '/api/v1/../../etc/passwd', '/api/v1/%2e%2e/sessions', '/api/v1/runs', '/api/v1/hitl'), pathParam.map((p) => `/api/v1/${p}`)),
        query: ['x'],
        body: jsonTree,
        runs: 120,
      },
      'paths outside /api/v1': {
        method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'CONNECT'),
        path: fc.oneof(fc.constantFrom('/', '/api', '/api/v2/sessions', '/ws/chat/x', '/socket.io/?EIO=4&transport=polling', '/socket.io/?EIO=3', '/socket.io/?EIO=4&transport=polling&sid=nope', '/%2e%2e/%2e%2e/etc/passwd', '*', '/favicon.ico', '/index.html'), pathParam.map((p) => `/${p}`)),
        query: ['x'],
        body: jsonTree,
        runs: 60,
      },
    };
    };
    const routes = routeSpecs(jsonArbitraries('never'));

    const keyVariants = [`${ALICE} `, ` ${ALICE}`, `${ALICE}\t`, ALICE.toUpperCase(), ALICE.slice(0, -1), `${ALICE}x`, `${ALICE},${BOB}`, `Bearer ${ALICE}`, `${ALICE}\u00e9`, '', ' ', 'null', 'undefined', '0', '[]', 'a'.repeat(10_000), 'é', '%00', '\u00ff\u00fe', '*', BOB.slice(0, 8), 'fz-alice-', 'test-key-alice'];
    const auth: fc.Arbitrary<Array<[string, string]>> = fc.oneof(
      { weight: 8, arbitrary: fc.constant<Array<[string, string]>>([['X-API-Key', ALICE]]) },
      { weight: 2, arbitrary: fc.constant<Array<[string, string]>>([['x-api-key', BOB]]) },
      { weight: 1, arbitrary: fc.constant<Array<[string, string]>>([]) },
      { weight: 2, arbitrary: fc.constantFrom(...keyVariants).map((v): Array<[string, string]> => [['X-API-Key', v]]) },
      { weight: 1, arbitrary: fc.constantFrom<Array<[string, string]>>([['X-API-Key', ALICE], ['X-API-Key', BOB]], [['X-API-Key', 'bogus'], ['X-API-Key', ALICE]], [['X-API-Key', ALICE], ['x-api-key', ALICE]], [['Authorization', `Bearer ${ALICE}`]], [['X-API-KEY', ALICE]]) },
    );
    // Mostly values HTTP allows (so the request reaches the app), some it does not.
    const headerValue = fc.oneof(
      { weight: 6, arbitrary: oddString.filter((s) => /^[^\u0000-\u001f\u007f]*$/.test(s) && s.length < 5_000) },
      { weight: 1, arbitrary: oddString.filter((s) => !/[\r\n]/.test(s) && s.length < 5_000) },
      { weight: 1, arbitrary: fc.constantFrom('\r\nX-Injected: 1', 'a'.repeat(20_000), 'a'.repeat(70_000)) },
    );
    const extra: fc.Arbitrary<Array<[string, string]>> = fc.array(
      fc.oneof(
        fc.constantFrom<[string, string]>(['Accept', '*/*'], ['Accept', 'text/event-stream'], ['Accept', 'application/xml'], ['Origin', 'http://evil.example'], ['Origin', 'null'], ['X-Request-Id', '../../x'], ['X-Request-Id', 'a'.repeat(300)], ['Last-Event-ID', 'x:1'], ['Expect', '100-continue'], ['Expect', 'nonsense'], ['Content-Encoding', 'gzip'], ['Content-Encoding', 'br'], ['Content-Encoding', 'identity, deflate'], ['Accept-Encoding', 'gzip'], ['Connection', 'keep-alive'], ['Cookie', 'a=b; session=x'], ['X-HTTP-Method-Override', 'DELETE'], ['Content-Length', '0'], ['Range', 'bytes=0-1'], ['If-None-Match', '*'], ['Upgrade', 'websocket'], ['Upgrade', 'h2c']),
        fc.tuple(fc.constantFrom('X-Fuzz', 'Accept-Language', 'User-Agent', 'X-Request-Id', 'Last-Event-ID', 'Referer', 'X-Forwarded-Proto'), headerValue),
      ),
      { maxLength: 3 },
    );
    const describeInput = (i: RestInput) => `${i.method} ${i.target.slice(0, 300)} headers=${JSON.stringify([...i.auth, ...i.extra, ['Content-Type', i.contentType]]).slice(0, 400)} body=${JSON.stringify(i.body).slice(0, 600)}${i.chunked ? ' (chunked)' : ''}`;
    let restRuns = 0;

    /** Sends one request and lists what is wrong with the answer. */
    async function restOne(input: RestInput, property: string): Promise<string[]> {
      ledger.count('REST requests');
      let target = input.target;
      let auth = input.auth;
      const foreign = new RegExp(`${FOREIGN}(bob|alice):([A-Za-z0-9-]+)`).exec(target);
      if (foreign) {
        target = target.replace(foreign[0], foreign[2]);
        auth = [['X-API-Key', foreign[1] === 'bob' ? BOB : ALICE]];
      }
      let body = bodyBytes(input.body);
      // Stored history stays as it was: a request that could change a user's own stored session
      // (a DELETE of it, a chat into it) is sent as the other user instead, and must fail.
      // X-API-Key wins; without it, the first Authorization header's Bearer token (Node keeps only the first).
      const actingAs = (list: Array<[string, string]>) => {
        const who = (key: string | undefined) => (key === ALICE ? 'alice' : key === BOB ? 'bob' : null);
        const k = list.filter(([n]) => n.toLowerCase() === 'x-api-key').map(([, v]) => v.replace(/^[ \t]+|[ \t]+$/g, ''));
        if (k.length > 0) return k.length === 1 ? who(k[0]) : null;
        const bearer = list.find(([n]) => n.toLowerCase() === 'authorization')?.[1];
        return who(bearer ? /^Bearer\s+(\S+)\s*$/i.exec(bearer)?.[1] : undefined);
      };
      const sentText = `${target} ${body?.toString('latin1') ?? ''}`;
      const mutating = input.method === 'DELETE' || /^\/api\/v1\/chat(\/stream)?(\?|$)/.test(target);
      if (mutating && actingAs(auth) === 'alice' && ids.aliceSessions.some((id) => sentText.includes(id))) auth = [['X-API-Key', BOB]];
      else if (mutating && actingAs(auth) === 'bob' && sentText.includes(ids.bobSession)) auth = [['X-API-Key', ALICE]];
      const headers: Array<[string, string]> = [...auth, ...input.extra];
      if (input.contentType !== null && (body || input.method === 'POST')) headers.push(['Content-Type', input.contentType]);
      if (input.chunked && body) {
        headers.push(['Transfer-Encoding', 'chunked']);
        body = Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
      }
      const isChat = /^\/api\/v1\/chat(\/stream)?(\?|$)/.test(target);
      const isStream = /^\/api\/v1\/chat\/stream(\?|$)/.test(target);
      const res = await rawHttp(port(), { method: input.method, target, headers, body, autoLength: !input.chunked }, { timeoutMs: isChat ? 40_000 : 10_000, streamMs: isStream ? 40_000 : 1_500 });
      // Node's own refusals (bad request line, 431) carry no Content-Type; everything the app
      // answers does (and X-Request-Id, once the request got past the body parser).
      const reachedApp = header(res, 'x-request-id') !== undefined || header(res, 'content-type') !== undefined;
      ledger.status(property, res.status ? `${res.status}${reachedApp ? '' : '*'}` : res.error || 'no answer');
      const problems: string[] = [];
      const where = `${input.method} ${target.slice(0, 200)}`;
      const text = res.body.toString('utf8');
      const sse = /text\/event-stream/.test(header(res, 'content-type') ?? '');
      let parsed: any;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      const method = input.method.toUpperCase();
      // A request past the server's limits (16 KiB of headers, 1 MiB of body) may be cut off while
      // it is still being sent; the refusal is then lost to the reset. Not an answer, not a failure.
      const headBytes = headers.reduce((n, [k, v]) => n + k.length + Buffer.byteLength(v) + 4, target.length);
      const oversized = headBytes > 16 * 1024 || (body?.length ?? 0) > 1_000_000;
      if (res.status === 0) {
        if (!(method === 'CONNECT' || (oversized && res.error))) problems.push(`${where}: no answer (${res.error ?? (res.timedOut ? 'timeout' : 'closed')})`);
        else if ((await gatewayProblem(property, () => describeInput(input))) !== null) problems.push(`${where}: the gateway went down`);
      } else if (res.timedOut && !(sse && /^\/api\/v1\/runs\//.test(target))) {
        problems.push(`${where}: answer ${res.status} not complete within the deadline`);
      }
      if (res.status >= 500 && !statusOk(res.status, parsed?.error_code)) problems.push(`${where}: ${res.status} ${text.slice(0, 300)}`);
      // /socket.io/ is Socket.IO's own endpoint: its refusals follow the engine.io protocol ({code, message}).
      if (reachedApp && res.status >= 400 && method !== 'HEAD' && !/^\/socket\.io\//.test(target)) {
        if (!parsed || typeof parsed.error_code !== 'string' || typeof parsed.message !== 'string' || typeof parsed.details !== 'object' || parsed.details === null) {
          problems.push(`${where}: ${res.status} without {error_code, message, details}: ${text.slice(0, 200)}`);
        }
      }
      if (scanner.scan(`REST answer to ${where}`, Buffer.concat([res.body, Buffer.from(JSON.stringify(res.headers))]))) problems.push(`${where}: a secret in the answer`);
      const sent = (input.body.kind === 'json' ? toJsonText(input.body.json) : '') + target + JSON.stringify(input.extra);
      if (text.includes(POLLUTION_MARKER) && !sent.includes(POLLUTION_MARKER)) problems.push(`${where}: the answer shows the prototype-pollution marker an earlier request sent: ${text.slice(0, 300)}`);
      const actsAs = actingAs(headers);
      const ok = res.status >= 200 && res.status < 300;
      const deleted = /^\/api\/v1\/sessions\/([A-Za-z0-9_-]+)\/?(\?|$)/.exec(target);
      if (ok && method === 'DELETE' && deleted) deletedSessions.add(deleted[1]);
      // Public without a key: health, Socket.IO's own endpoint, the web UI's page and modules, the API docs, metrics.
      const publicPath = /^\/api\/v1\/+health/i.test(target) || target.startsWith('/socket.io/') || /^\/(\?|$)|^\/(ui|docs)\/|^\/docs(\?|$)|^\/metrics(\?|$)/.test(target);
      if (ok && actsAs === null && method !== 'OPTIONS' && !publicPath) problems.push(`${where}: ${res.status} without a valid API key`);
      // What the route acts on: its path, and for chats the body's session_id.
      const actedOn = `${target.split('?')[0]} ${isChat ? (body?.toString('latin1') ?? '') : ''}`;
      const aliceOwned = [...ids.aliceSessions, ...ids.aliceRuns, ...ids.scratch, ids.hitlRequest];
      const bobOwned = [ids.bobSession, ids.bobRun];
      if (ok && method !== 'OPTIONS' && ((actsAs === 'bob' && aliceOwned.some((id) => actedOn.includes(id))) || (actsAs === 'alice' && bobOwned.some((id) => actedOn.includes(id))))) {
        problems.push(`${where}: ${res.status} for another user's session, run or approval`);
      }
      if (ok && isChat && method === 'POST') {
        restRuns++;
        if (sse) {
          const events = parseSse(text).filter((f) => f.id).map((f) => JSON.parse(f.data) as EventDict);
          ledger.run(events[0]?.run_id, events[0]?.session_id);
          const problem = wellFormed(events);
          if (problem) problems.push(`${where}: streamed run ${events[0]?.run_id}: ${problem}`);
        } else if (parsed) {
          ledger.run(parsed.run_id, parsed.session_id);
          const problem = wellFormed(parsed.events ?? []);
          if (problem) problems.push(`${where}: run ${parsed.run_id}: ${problem}`);
        }
      }
      return problems;
    }

    const requestOf = (route: string, spec: RouteSpec, body: fc.Arbitrary<BodySpec>): fc.Arbitrary<RestInput> =>
      fc.record({
        route: fc.constant(route),
        method: spec.method,
        target: fc.tuple(spec.path, queryString(spec.query)).map(([p, q]) => p + q),
        auth,
        contentType: fc.oneof({ weight: 6, arbitrary: fc.constant('application/json') }, { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) }, { weight: 1, arbitrary: fc.constant(null) }),
        extra,
        body,
        chunked: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      });
    const restProperty = (name: string, request: fc.Arbitrary<RestInput>, numRuns: number) =>
      // A batch goes out at once: faster, and shrinking drops the requests that do not matter.
      checkProperty(ledger, name, fc.array(request, { minLength: 1, maxLength: 4 }), async (batch) => {
        const problems = (await Promise.all(batch.map((r) => restOne(r, name)))).flat();
        if (problems.length) {
          const death = await gatewayProblem(name, () => batch.map(describeInput).join(' | '));
          throw new Error([...problems, ...(death ? [death] : [])].join('\n'));
        }
      }, { seed: seedFor(), numRuns: runs(numRuns), timeLimitMs: 25_000 });

    const plainTree = jsonArbitraries('never').tree;
    // Routes without a body mostly get none: a body they do not read is parsed (and refused) first.
    const bodyRoutes = ['chat', 'chat/stream', 'cancel', 'hitl', 'sessions create'];
    for (const [route, spec] of Object.entries(routes)) {
      const body = bodyRoutes.includes(route) ? bodySpec(spec.body, plainTree) : fc.oneof({ weight: 4, arbitrary: fc.constant<BodySpec>({ kind: 'none' }) }, { weight: 1, arbitrary: bodySpec(spec.body, plainTree) });
      await restProperty(`REST ${route}`, requestOf(route, spec, body), spec.runs);
    }
    // Prototype keys and deep nesting in the bodies of every route, each their own property.
    const withProto = routeSpecs(jsonArbitraries('always'));
    await restProperty('REST prototype keys in bodies', fc.constantFrom(...bodyRoutes).chain((r) => requestOf(r, withProto[r], withProto[r].body.map((json) => ({ kind: 'json' as const, json })))), 150);
    await restProperty('REST deeply nested bodies', fc.constantFrom(...bodyRoutes).chain((r) => requestOf(r, routes[r], deepJson.map((json) => ({ kind: 'json' as const, json })))), 40);
    ledger.notes.push(`REST chats that started runs: ${restRuns}`);

    // Prototype pollution would show in defaults: a new session with no fields must be plain.
    const fresh = await json('POST', '/sessions', ALICE, {});
    expect([fresh.status, fresh.body.title, fresh.body.assistant_id, JSON.stringify(fresh.body).includes(POLLUTION_MARKER)]).toEqual([201, '', 'default', false]);
    expect(newFailures(failuresFrom, crashesFrom)).toEqual([]);
  }, 600_000);

  // ===========================================================================================
  // Socket.IO

  it('Socket.IO: odd handshakes and messages of every type, with and without acks, get answers and keep the connection', async () => {
    const failuresFrom = ledger.failures.length;
    const crashesFrom = ledger.crashes.length;

    // Handshakes: only a valid key connects; everything else gets a connect_error that says why.
    const keyValue = fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom<Json>(ALICE, BOB) },
      { weight: 3, arbitrary: jsonTree },
      { weight: 1, arbitrary: fc.constantFrom<Json>(`${ALICE} `, ALICE.toUpperCase(), [ALICE], obj([['toString', ALICE]]), { num: '1e999' }, null, '', `${ALICE}\u0000`) },
    );
    const handshake = fc.record({
      auth: fc.oneof({ weight: 4, arbitrary: objectBody({ apiKey: keyValue, api_key: keyValue }) }, { weight: 1, arbitrary: jsonTree }),
      header: fc.option(fc.oneof(fc.constantFrom(ALICE, BOB, 'bogus', '', ALICE.slice(1)), oddString.filter((s) => /^[\x20-\x7e]*$/.test(s) && s.length < 2_000)), { nil: undefined }),
    });
    await checkProperty(ledger, 'Socket.IO handshake', handshake, async ({ auth, header: headerKey }) => {
      ledger.count('Socket.IO handshakes');
      const authJs = toJs(auth);
      const isObject = authJs !== null && typeof authJs === 'object' && !Array.isArray(authJs);
      // A CONNECT whose auth is not an object is a malformed packet the server may answer by closing.
      const result = await sioConnect({ auth: authJs, headers: headerKey === undefined ? undefined : { 'x-api-key': headerKey } }, isObject ? 5_000 : 1_000);
      const apiKey = isObject ? (authJs as Record<string, unknown>).apiKey : undefined;
      const presented = [apiKey, headerKey].filter((k) => k === ALICE || k === BOB);
      const problems: string[] = [];
      if ('socket' in result) {
        ledger.status('Socket.IO handshake', 'connected');
        result.socket.disconnect();
        if (presented.length === 0) problems.push(`connected without a valid key (auth ${JSON.stringify(authJs)?.slice(0, 200)}, header ${headerKey})`);
      } else {
        const data = result.error.data;
        const silent = result.error.timeout ? 'no answer' : result.error.closed ? 'closed without connect_error' : null;
        ledger.status('Socket.IO handshake', data?.error_code ?? (silent ? `${silent} (auth ${isObject ? 'an object' : 'not an object'})` : result.error.message.slice(0, 40)));
        if (silent && isObject) problems.push(`the handshake got ${silent}`);
        if (data !== undefined && (typeof data.error_code !== 'string' || typeof data.message !== 'string')) problems.push(`connect_error data without error_code/message: ${JSON.stringify(data).slice(0, 200)}`);
        if (scanner.scan('Socket.IO connect_error', JSON.stringify({ m: result.error.message, data }))) problems.push('a secret in the connect_error');
        if ((apiKey === ALICE || apiKey === BOB) && data?.error_code) problems.push(`refused a valid key: ${data.error_code}`);
      }
      if (problems.length) {
        const death = await gatewayProblem('Socket.IO handshake', () => JSON.stringify({ auth: authJs, headerKey }));
        throw new Error([...problems, ...(death ? [death] : [])].join('; '));
      }
    }, { seed: seedFor(), numRuns: runs(150), timeLimitMs: 30_000 });

    // Messages through the client library.
    const errorsSeen: Array<Record<string, any>> = [];
    let disconnectReason: string | null = null;
    const openSocket = async () => {
      const s = await aliceSocket();
      disconnectReason = null;
      s.on('event', (e: Record<string, any>) => {
        scanner.scan('Socket.IO event', JSON.stringify(e));
        ledger.run(e.run_id, e.session_id);
        if (e.event_type === 'error' && !e.seq) errorsSeen.push(e);
      });
      s.on('pong', (p: unknown) => scanner.scan('Socket.IO pong', JSON.stringify(p)));
      s.on('disconnect', (reason) => (disconnectReason = reason));
      return s;
    };
    let socket = await openSocket();

    const runRefs = fc.constantFrom<Json>(...ids.aliceRuns, ids.bobRun, 'nope', '');
    const sessionRefs = fc.constantFrom<Json>(...ids.scratch, ids.bobSession, ids.hitlSession, 'nope');
    type SioArg = { json: Json } | { text: string } | { bytes: number[] };
    type SioMessage = { event: string; args: SioArg[]; ack: boolean };
    /** `{type, payload}` messages of every type, payloads built from `J`. */
    const typedMessage = ({ objectBody, field, tree }: JsonArbitraries): fc.Arbitrary<SioArg> => {
      const payloads: Record<string, fc.Arbitrary<Json>> = {
        chat: objectBody({ message: field(fc.constantFrom<Json>('hi over socket.io', 'ü', '\u202e'), 2), session_id: field(sessionRefs), assistant_id: field(fc.constantFrom<Json>('default')) }),
        cancel: objectBody({ session_id: field(sessionRefs) }),
        hitl_decision: objectBody({ request_id: field(fc.constantFrom<Json>(ids.hitlRequest, `${ids.aliceRuns[0]}:call_x`, 'nope')), decision: field(fc.constantFrom<Json>('approve', 'reject', 'approve_all')), message: field(fc.constant<Json>('ok')) }),
        resume: objectBody({ run_id: field(runRefs, 2), session_id: field(sessionRefs), after_seq: field(fc.oneof(fc.nat({ max: 20 }).map<Json>((n) => ({ num: String(n) })), numberLike.filter((s) => /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(s)).map<Json>((num) => ({ num })))) }),
        ping: fc.oneof(fc.constant<Json>(obj([])), tree),
      };
      return fc
        .tuple(fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...Object.keys(payloads)) }, { weight: 1, arbitrary: oddString }), fc.boolean())
        .chain(([type, withPayload]) => (Object.hasOwn(payloads, type) ? payloads[type] : tree).map((p) => ({ json: obj([['type', type], ...(withPayload ? ([['payload', p]] as Array<[string, Json]>) : [])]) })));
    };
    const plain = jsonArbitraries('never');
    const messageArg: fc.Arbitrary<SioArg> = fc.oneof(
      { weight: 8, arbitrary: typedMessage(plain) },
      { weight: 2, arbitrary: plain.tree.map((json) => ({ json })) },
      { weight: 1, arbitrary: fc.oneof(fc.constantFrom('{not json', '', '{"type":"ping"}', '{"type":"chat","payload":{"message":"as text"}}', 'x'.repeat(70_000)), oddString).map((text) => ({ text })) },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 40 }).map((b) => ({ bytes: [...b] })) },
    );
    const messagesOf = (arg: fc.Arbitrary<SioArg>, oddEvents: boolean): fc.Arbitrary<SioMessage[]> =>
      fc.array(
        fc.record({
          event: oddEvents ? fc.oneof({ weight: 10, arbitrary: fc.constant('message') }, { weight: 1, arbitrary: fc.constantFrom('chat', 'event', 'pong', 'ping', 'resume', '', 'message ', 'MESSAGE', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'x'.repeat(300)) }) : fc.constant('message'),
          args: fc.oneof({ weight: 8, arbitrary: arg.map((a) => [a]) }, { weight: 1, arbitrary: fc.constant<SioArg[]>([]) }, { weight: 1, arbitrary: fc.array(arg, { minLength: 2, maxLength: 3 }) }),
          ack: fc.boolean(),
        }),
        { minLength: 1, maxLength: 6 },
      );
    // Deep documents go as JSON text: the client library's own encoder would overflow first.
    const deepArg: fc.Arbitrary<SioArg> = fc.tuple(deepJson, fc.constantFrom('whole', 'chat', 'resume', 'cancel')).map(([j, where]) => ({ text: where === 'whole' ? toJsonText(j) : `{"type":"${where}","payload":{"message":${toJsonText(j)},"session_id":${toJsonText(j)},"after_seq":${toJsonText(j)}}}` }));
    const argValue = (a: SioArg) => ('json' in a ? toJs(a.json) : 'text' in a ? a.text : Buffer.from(a.bytes));
    const describeArgs = (a: SioArg) => ('json' in a ? toJsonText(a.json).slice(0, 300) : 'text' in a ? `text:${a.text.slice(0, 100)}` : `bytes:${hex(Buffer.from(a.bytes))}`);

    const sioProperty = (name: string, arb: fc.Arbitrary<SioMessage[]>, numRuns: number) => checkProperty(ledger, name, arb, async (batch) => {
      if (!socket.connected) socket = await openSocket();
      const errorsBefore = errorsSeen.length;
      const problems: string[] = [];
      const acks: Array<Promise<Record<string, any>>> = [];
      for (const m of batch) {
        ledger.count('Socket.IO messages');
        const args = m.args.map(argValue);
        if (m.ack && m.event === 'message') acks.push(socket.timeout(10_000).emitWithAck(m.event, ...args).catch((err: Error) => ({ noAck: err.message })));
        else if (m.ack) socket.emit(m.event, ...args, () => undefined);
        else socket.emit(m.event, ...args);
      }
      // A ping with an ack closes the batch: what the batch caused has arrived by then.
      acks.push(socket.timeout(10_000).emitWithAck('message', { type: 'ping' }).catch((err: Error) => ({ noAck: `barrier ping: ${err.message}` })));
      const refusedCodes: string[] = [];
      for (const a of await Promise.all(acks)) {
        ledger.status('Socket.IO acks', a?.noAck ? 'no ack' : a?.ok === true ? 'ok' : (a?.error_code ?? 'malformed'));
        if (a?.noAck) problems.push(`no acknowledgement (${a.noAck})`);
        else if (a?.ok === true) ledger.run(a.run_id, a.session_id);
        else if (a?.ok === false && typeof a.error_code === 'string') refusedCodes.push(a.error_code);
        else problems.push(`malformed acknowledgement ${JSON.stringify(a).slice(0, 200)}`);
        if (scanner.scan('Socket.IO ack', JSON.stringify(a))) problems.push('a secret in an acknowledgement');
      }
      // Each refusal also comes as an error event with its code.
      const missing = () => {
        const seen = errorsSeen.slice(errorsBefore).map((e) => String(e.error_code));
        return refusedCodes.filter((c) => {
          const i = seen.indexOf(c);
          if (i >= 0) seen.splice(i, 1);
          return i < 0;
        });
      };
      const until = Date.now() + 2_000;
      while (missing().length && Date.now() < until && socket.connected) await sleep(20);
      if (missing().length) problems.push(`refusals without an error event: ${missing().join(',')}`);
      for (const e of errorsSeen.slice(errorsBefore)) {
        const status = e.details?.status;
        ledger.status('Socket.IO error events', `${e.error_code}/${status}`);
        if (typeof status !== 'number' || !statusOk(status, e.error_code)) problems.push(`error event with status ${status}: ${JSON.stringify(e).slice(0, 300)}`);
        if (e.recoverable !== true) problems.push(`error event not recoverable: ${JSON.stringify(e).slice(0, 200)}`);
      }
      if (!socket.connected) {
        const dropped = errorsSeen.slice(errorsBefore).some((e) => e.error_code === 'too_many_messages' || e.error_code === 'slow_consumer');
        if (!dropped) problems.push(`the connection closed (${disconnectReason})`);
      }
      if (problems.length) {
        const death = await gatewayProblem(name, () => JSON.stringify(batch.map((m) => ({ event: m.event, ack: m.ack, args: m.args.map(describeArgs) }))));
        if (!socket.connected) socket = await openSocket();
        throw new Error([...problems, ...(death ? [death] : [])].join('; '));
      }
    }, { seed: seedFor(), numRuns: runs(numRuns), timeLimitMs: 45_000 });
    await sioProperty('Socket.IO messages', messagesOf(messageArg, true), 800);
    await sioProperty('Socket.IO prototype keys in messages', messagesOf(typedMessage(jsonArbitraries('always')), false), 150);
    await sioProperty('Socket.IO deeply nested messages', messagesOf(deepArg, false), 40);

    // After all of it a ping still answers on the same connection.
    if (!socket.connected) socket = await openSocket();
    const pong = new Promise((r) => socket.once('pong', r));
    socket.emit('message', { type: 'ping' });
    await expect(deadline(pong, 5_000, 'pong')).resolves.toHaveProperty('timestamp');
    socket.disconnect();

    // Raw engine.io packets: what a hostile client writes without the client library.
    const packet = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.tuple(
          fc.constantFrom('42/chat,', '42/chat,7', '43/chat,1', '42', '42/other,', '45/chat,1-', '451-/chat,', '4999999999999-/chat,'),
          fc.oneof(jsonTree.map((j) => toJsonText(['message', j])), jsonTree.map(toJsonText), fc.constantFrom('["message",{"type":"ping"}]', '["message",{"_placeholder":true,"num":0}]', '["message",{"_placeholder":true,"num":99}]', '[', '', '["__proto__",{}]', '[null]', '[1,2,3]', '{"a":1}')),
        ).map(([h, b]) => ({ text: h + b })),
      },
      { weight: 2, arbitrary: fc.constantFrom('2', '3', '5', '6', '1', '4', '40', '40/chat,', '40/chat,{"apiKey":"x"}', '41/chat,', '44/chat,{}', '46/chat,', '47', '4x', '9', '', '2probe', '0', '40/%,').map((text) => ({ text })) },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 30 }).map((b) => ({ bytes: [...b] })) },
      { weight: 1, arbitrary: oddString.map((text) => ({ text: `42/chat,${text}` })) },
    );
    await checkProperty(ledger, 'engine.io raw packets', fc.record({ authed: fc.boolean(), packets: fc.array(packet, { minLength: 1, maxLength: 8 }) }), async ({ authed, packets }) => {
      ledger.count('engine.io raw packets', packets.length);
      const problems: string[] = [];
      let client: RawWsClient | undefined;
      try {
        client = await RawWsClient.open(port(), '/socket.io/?EIO=4&transport=websocket');
        await client.waitFor((f) => f.payload.toString().startsWith('0{'));
        if (authed) {
          client.sendText(`40/chat,${JSON.stringify({ apiKey: ALICE })}`);
          await client.waitFor((f) => f.payload.toString().startsWith('40/chat,'));
        }
        for (const p of packets) {
          if ('text' in p) client.sendText(p.text);
          else client.sendRaw(Buffer.concat([Buffer.from([0x82, 0x80 | p.bytes.length, 1, 2, 3, 4]), Buffer.from(p.bytes.map((b, i) => b ^ [1, 2, 3, 4][i % 4]))]));
        }
        // Until the gateway has read them all and closed the connection in turn.
        await client.finish();
        for (const f of client.frames) if (scanner.scan('engine.io frame', f.payload)) problems.push('a secret in an engine.io frame');
        for (const c of client.frames.filter((f) => f.opcode === 8).map(closeInfo)) if (c.code === 1011) problems.push(`closed with 1011 ${c.reason}`);
      } catch (err) {
        problems.push((err as Error).message);
      } finally {
        client?.close();
      }
      const death = await gatewayProblem('engine.io raw packets', () => JSON.stringify({ authed, packets }).slice(0, 1_500));
      if (death) problems.push(death);
      if (problems.length) throw new Error(problems.join('; '));
    }, { seed: seedFor(), numRuns: runs(120), timeLimitMs: 25_000 });

    expect(newFailures(failuresFrom, crashesFrom)).toEqual([]);
  }, 600_000);

  // ===========================================================================================
  // Plain WebSocket

  it('plain WebSocket: refused upgrades answer 401/404 over HTTP, and no frame, however wrong, harms the gateway', async () => {
    const failuresFrom = ledger.failures.length;
    const crashesFrom = ledger.crashes.length;

    // Upgrades with wrong keys, paths or sessions, with frames pipelined right behind the request.
    type UpgradeInput = { path: string; pathKind: 'own' | 'foreign' | 'unknown' | 'bad'; keyIn: 'header' | 'query' | 'both' | 'none' | 'dup'; key: string; keyKind: 'valid' | 'bob' | 'odd'; broken: 'none' | 'protocol' | 'no-key' | 'bad-version' | 'no-upgrade' | 'bad-protocol'; frames: FrameGen[] };
    const upgradeArb: fc.Arbitrary<UpgradeInput> = fc
      .record({
        pathSpec: fc.oneof(
          { weight: 2, arbitrary: fc.constant({ path: `/ws/chat/${ids.wsSession}`, pathKind: 'own' as const }) },
          { weight: 1, arbitrary: fc.constant({ path: `/ws/chat/${ids.bobSession}`, pathKind: 'foreign' as const }) },
          { weight: 1, arbitrary: fc.constantFrom('nope', 'a'.repeat(64), 'x_-1').map((s) => ({ path: `/ws/chat/${s}`, pathKind: 'unknown' as const })) },
          {
            weight: 2,
            arbitrary: fc
              .oneof(fc.constantFrom('/ws/', '/ws/chat/', '/ws/chat/a/b', '/ws/chat/../x', '/ws/chat/%00', `/ws/chat/${'a'.repeat(65)}`, '/ws/chat/é', '/ws/other/x', '/ws//chat/x', `/ws/chat/${ids.wsSession}/extra`), pathParam.map((p) => `/ws/chat/${p}`))
              .filter((p) => !/^\/ws\/chat\/[A-Za-z0-9_-]{1,64}\/?$/.test(p))
              .map((path) => ({ path, pathKind: 'bad' as const })),
          },
        ),
        keyIn: fc.constantFrom('header' as const, 'query' as const, 'both' as const, 'none' as const, 'dup' as const),
        keySpec: fc.oneof(
          { weight: 3, arbitrary: fc.constant({ key: ALICE, keyKind: 'valid' as const }) },
          { weight: 1, arbitrary: fc.constant({ key: BOB, keyKind: 'bob' as const }) },
          { weight: 2, arbitrary: fc.oneof(fc.constantFrom('', 'bogus', ALICE.slice(0, -1), `${ALICE}x`), oddString.filter((s) => /^[\x21-\x7e]*$/.test(s) && s.length < 1_000 && s !== ALICE && s !== BOB)).map((key) => ({ key, keyKind: 'odd' as const })) },
        ),
        broken: fc.oneof({ weight: 6, arbitrary: fc.constant('none' as const) }, { weight: 1, arbitrary: fc.constantFrom('protocol' as const, 'no-key' as const, 'bad-version' as const, 'no-upgrade' as const, 'bad-protocol' as const) }),
        frames: fc.array(frameGen, { maxLength: 3 }),
      })
      .map(({ pathSpec, keySpec, ...rest }) => ({ ...pathSpec, ...keySpec, ...rest }));

    await checkProperty(ledger, 'WebSocket upgrade', upgradeArb, async (u) => {
      ledger.count('WebSocket upgrades');
      const headers: Array<[string, string]> = [];
      let targetPath = u.path;
      if (u.keyIn === 'header' || u.keyIn === 'both') headers.push(['X-API-Key', u.key]);
      if (u.keyIn === 'dup') headers.push(['X-API-Key', u.key], ['X-API-Key', 'bogus']);
      if (u.keyIn === 'query' || u.keyIn === 'both') targetPath += `?api_key=${encodeURIComponent(u.key)}`;
      const handshake: Record<UpgradeInput['broken'], Array<[string, string]>> = {
        none: [['Upgrade', 'websocket'], ['Connection', 'Upgrade'], ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ=='], ['Sec-WebSocket-Version', '13']],
        protocol: [['Upgrade', 'websocket'], ['Connection', 'Upgrade'], ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ=='], ['Sec-WebSocket-Version', '13'], ['Sec-WebSocket-Protocol', 'chat, superchat']],
        'bad-protocol': [['Upgrade', 'websocket'], ['Connection', 'Upgrade'], ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ=='], ['Sec-WebSocket-Version', '13'], ['Sec-WebSocket-Protocol', 'chat, \u00e9, ,']],
        'no-key': [['Upgrade', 'websocket'], ['Connection', 'Upgrade'], ['Sec-WebSocket-Version', '13']],
        'bad-version': [['Upgrade', 'websocket'], ['Connection', 'Upgrade'], ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ=='], ['Sec-WebSocket-Version', '99']],
        'no-upgrade': [['Connection', 'keep-alive']],
      };
      // The frames go out right behind the request, before the client could know the answer.
      const answer = await rawUpgrade(port(), targetPath, [...handshake[u.broken], ...headers], { timeoutMs: 5_000, omitDefaults: true, after: Buffer.concat(u.frames.map(frameBytes)) });
      const drained = answer.status ? await drain(answer.socket, answer.rest, answer.status === 101 ? 100 : 300) : { bytes: answer.rest, closed: true };
      answer.socket.destroy();
      ledger.status('WebSocket upgrade', answer.status || answer.error || 'none');
      const problems: string[] = [];
      const keyOk = (u.keyIn === 'header' || u.keyIn === 'query' || u.keyIn === 'both') && u.keyKind !== 'odd';
      const handshakeOk = u.broken === 'none' || u.broken === 'protocol';
      const ownSession = (u.pathKind === 'own' && u.keyKind === 'valid') || (u.pathKind === 'foreign' && u.keyKind === 'bob');
      let expected: number[];
      if (!handshakeOk) expected = [400, 401, 403, 404, 426];
      // A path that is no URL at all (raw non-ASCII, bad escapes) may get 400 instead of 404.
      else if (u.pathKind === 'bad') expected = keyOk ? [400, 404] : [400, 401, 404];
      else if (!keyOk) expected = [401];
      else expected = ownSession ? [101] : [404];
      // Past Node's 16 KiB of request head the answer is 431 whatever else is wrong.
      if (targetPath.length + headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0) > 16 * 1024) expected = [...expected, 431];
      if (!expected.includes(answer.status)) {
        const close = answer.status === 101 ? decodeFrames(drained.bytes).frames.find((f) => f.opcode === 8) : undefined;
        const after = close ? ` and then closed the WebSocket with ${closeInfo(close).code} "${closeInfo(close).reason}"` : '';
        problems.push(`upgrade of ${targetPath.slice(0, 120)} (key in ${u.keyIn}, ${u.keyKind}; handshake ${u.broken}) answered ${answer.status || answer.error}${after}; expected ${expected.join(' or ')}`);
      }
      if (scanner.scan('WebSocket upgrade answer', drained.bytes)) problems.push('a secret in the upgrade answer');
      const death = await gatewayProblem('WebSocket upgrade', () => `${JSON.stringify({ ...u, frames: undefined }).slice(0, 1_000)} frames: ${u.frames.map((f) => hex(frameBytes(f), 24)).join(' | ')}`);
      if (death) problems.push(death);
      if (problems.length) throw new Error(problems.join('; '));
    }, { seed: seedFor(), numRuns: runs(250), timeLimitMs: 35_000 });

    // Frames after a valid upgrade, on the chat socket and on Socket.IO's engine.
    type FramesInput = { target: 'chat' | 'engine'; frames: FrameGen[]; split: number; flood?: { n: number; kind: 'ping' | 'text' | 'continuation' | 'empty-text' }; raw?: string };
    /** Byte sequences worth sending as they are (hex), whatever the generator makes. */
    const NOTABLE = [
      '810568656c6c6f', // unmasked text "hello"
      '81ff', // masked, 64-bit length, nothing after
      '81ff7fffffffffffffff01020304', // masked, declared 2^63-1 bytes
      '81ffffffffffffffffff01020304', // declared length with the top bit set (invalid)
      '897e00c8' + '00'.repeat(4) + '61'.repeat(200), // masked ping of 200 bytes (control frame over 125)
      '0185' + '01020304' + '6966696e61', // a text fragment without FIN that never continues
      'c18501020304' + '6966696e61', // RSV1 set without an extension
      '8385010203046966696e61', // reserved opcode 3
      '8b8501020304' + '6966696e61', // reserved control opcode 11
      '8882010203040203', // close with a 1-byte-ish odd payload
      '8185010203040000', // masked, declares 5 bytes, sends 2
    ];
    const framesArb: fc.Arbitrary<FramesInput> = fc.record({
      target: fc.oneof({ weight: 3, arbitrary: fc.constant('chat' as const) }, { weight: 1, arbitrary: fc.constant('engine' as const) }),
      frames: fc.array(frameGen, { minLength: 1, maxLength: 8 }),
      split: fc.constantFrom(0, 0, 0, 1, 3, 7),
      flood: fc.option(fc.record({ n: fc.constantFrom(100, 1_000, 5_000), kind: fc.constantFrom('ping' as const, 'text' as const, 'continuation' as const, 'empty-text' as const) }), { nil: undefined, freq: 10 }),
      raw: fc.option(fc.constantFrom(...NOTABLE), { nil: undefined, freq: 6 }),
    });
    // 1005: the echo of a client's close frame that carried no code.
    const allowedCloseCodes = [1000, 1001, 1002, 1003, 1005, 1007, 1008, 1009, 1010, 4408, 4409];
    let framesSent = 0;
    const tiny = (opcode: number, payload: string, fin = true) => frameBytes({ fin, rsv: 0, opcode, masked: true, mask: [1, 2, 3, 4], payload: [...Buffer.from(payload)], lengthForm: 'min' });
    await checkProperty(ledger, 'WebSocket frames', framesArb, async (input) => {
      ledger.count('WebSocket frame sequences');
      framesSent += input.frames.length + (input.flood?.n ?? 0);
      const path = input.target === 'chat' ? `/ws/chat/${ids.wsSession}` : '/socket.io/?EIO=4&transport=websocket';
      const answer = await rawUpgrade(port(), path, input.target === 'chat' ? [['X-API-Key', ALICE]] : [], { timeoutMs: 5_000 });
      const problems: string[] = [];
      if (answer.status !== 101) {
        answer.socket.destroy();
        problems.push(`a valid upgrade of ${path} answered ${answer.status || answer.error}`);
      } else {
        let bytes = Buffer.concat([...(input.raw ? [Buffer.from(input.raw, 'hex')] : []), ...input.frames.map(frameBytes)]);
        if (input.flood) {
          const one = { ping: tiny(9, ''), text: tiny(1, '{"type":"ping"}'), 'empty-text': tiny(1, ''), continuation: tiny(0, 'a', false) }[input.flood.kind];
          const head = input.flood.kind === 'continuation' ? tiny(1, 'a', false) : Buffer.alloc(0);
          bytes = Buffer.concat([bytes, head, ...new Array<Buffer>(input.flood.n).fill(one)]);
        }
        // Split into tiny TCP writes (frames cut anywhere) when that stays a few thousand writes.
        if (input.split > 0 && bytes.length / input.split <= 4_000) for (let at = 0; at < bytes.length; at += input.split) answer.socket.write(bytes.subarray(at, at + input.split));
        else answer.socket.write(bytes);
        const sequence = input.raw ? { valid: false, messages: 0, closes: false } : analyseSequence(input.frames);
        const expectAcks = input.target === 'chat' && sequence.valid && !sequence.closes && !input.flood ? sequence.messages : 0;
        const acksIn = (b: Buffer) => decodeFrames(b).frames.filter((f) => f.opcode === 1 && /^\{"type":"ack"/.test(f.payload.toString())).length;
        let got = await drain(answer.socket, answer.rest, input.flood ? 400 : 60);
        // One ack per complete message of a valid sequence, in order.
        const until = Date.now() + 5_000;
        while (expectAcks > acksIn(got.bytes) && !got.closed && Date.now() < until) {
          const more = await drain(answer.socket, Buffer.alloc(0), 100);
          got = { bytes: Buffer.concat([got.bytes, more.bytes]), closed: more.closed, error: more.error };
        }
        answer.socket.destroy();
        const frames = decodeFrames(got.bytes).frames;
        const close = frames.find((f) => f.opcode === 8);
        ledger.status(`WebSocket frames (${input.target})`, close ? `close ${closeInfo(close).code}` : got.closed ? 'tcp closed' : 'open');
        if (close && !allowedCloseCodes.includes(closeInfo(close).code)) problems.push(`closed with ${closeInfo(close).code} "${closeInfo(close).reason}"`);
        if (expectAcks) {
          const acks = acksIn(got.bytes);
          if (acks !== expectAcks) problems.push(`${expectAcks} well-formed messages got ${acks} acks${close ? ` (closed ${closeInfo(close).code} "${closeInfo(close).reason}")` : got.closed ? ' (connection closed)' : ''}`);
          else if (got.closed || close) problems.push('a valid sequence of frames closed the connection');
        }
        for (const f of frames) {
          if (f.opcode !== 1) continue;
          const t = f.payload.toString();
          if (scanner.scan('WebSocket frame', t)) problems.push('a secret in a frame');
          try {
            const m = JSON.parse(t);
            if (m.type === 'ack' && m.ok) ledger.run(m.run_id, m.session_id);
            if (m.event_type === 'error' && m.details && !statusOk(m.details.status, m.error_code)) problems.push(`error event with status ${m.details.status}: ${t.slice(0, 200)}`);
          } catch {
            /* engine.io packets are not JSON */
          }
        }
      }
      // Ask every time: a frame that kills the gateway is what this property hunts.
      const death = await gatewayProblem('WebSocket frames', () => `target ${input.target}, split ${input.split}, flood ${JSON.stringify(input.flood)}, raw ${input.raw ?? '-'}, frames (hex) ${input.frames.map((f) => hex(frameBytes(f), 40)).join(' | ')}`);
      if (death) problems.push(death);
      if (problems.length) throw new Error(problems.join('; '));
    }, { seed: seedFor(), numRuns: runs(350), timeLimitMs: 50_000 });
    ledger.notes.push(`WebSocket frames sent after valid upgrades: ${framesSent}`);

    expect(newFailures(failuresFrom, crashesFrom)).toEqual([]);
  }, 600_000);

  // ===========================================================================================
  // SSE

  it('SSE: reconnects with odd Last-Event-ID and after_seq values get exactly the missed events, or a 4xx, and end', async () => {
    const failuresFrom = ledger.failures.length;
    const crashesFrom = ledger.crashes.length;
    const logs = preserved.runs;
    const mine = [...ids.aliceRuns];

    type SseInput = { run: string; lastEventId?: string; afterSeq?: string; extraQuery: string };
    const seqText = (runId: string) =>
      fc.oneof(
        { weight: 3, arbitrary: fc.nat({ max: (logs[runId]?.length ?? 10) + 3 }).map(String) },
        { weight: 2, arbitrary: numberLike.map((s) => encodeURIComponent(s)) },
        { weight: 1, arbitrary: oddString.map((s) => encodeURIComponent(safeForUri(s))) },
      );
    const lastEventIdArb = (runId: string) =>
      fc.oneof(
        { weight: 3, arbitrary: fc.nat({ max: (logs[runId]?.length ?? 10) + 3 }).map((k) => `${runId}:${k}`) },
        { weight: 2, arbitrary: fc.tuple(fc.constantFrom(runId, ids.aliceRuns[0], ids.aliceRuns[1], ids.bobRun, '', 'x', runId.toUpperCase(), `${runId}:${runId}`), fc.constantFrom(':', '::', ': ', ':-', ';', ''), numberLike).map(([r, sep, n]) => `${r}${sep}${n}`) },
        { weight: 1, arbitrary: oddString.filter((s) => !/[\r\n\u0000]/.test(s) && s.length < 8_000) },
        { weight: 1, arbitrary: fc.constantFrom(' ', `${runId}:5 `, ` ${runId}:1`, `${runId}:1\t`, `${runId}:１`, `${runId}:99999999999999999999`, `${runId}:4294967295`, `${runId}:4294967296`, `${runId}:-1`, `${runId}:1e3`, `${runId}:0x2`, `${runId}:`, ':3', 'é:1', `${runId}:007`) },
      );
    const sseArb: fc.Arbitrary<SseInput> = fc
      .oneof({ weight: 6, arbitrary: fc.constantFrom(...mine) }, { weight: 1, arbitrary: fc.constant(ids.bobRun) }, { weight: 1, arbitrary: pathParam })
      .chain((run) =>
        fc.record({
          run: fc.constant(run),
          lastEventId: fc.option(lastEventIdArb(run), { nil: undefined, freq: 2 }),
          afterSeq: fc.option(seqText(run), { nil: undefined, freq: 2 }),
          extraQuery: fc.constantFrom('', '&after_seq=1', '&after_seq=2&after_seq=3', '&after_seq[]=1', '&after_seq[__proto__]=1', '&x=1'),
        }),
      );

    /**
     * What the answer must be: for a plain decimal position k of this run, exactly the events
     * after k (past the end: nothing and an end, or a 4xx); for anything else a 4xx with an error
     * body, or some whole suffix of the log. Another user's or an unknown run: never a 200.
     */
    function expectation(input: SseInput): { kind: 'after'; k: number } | { kind: 'refuse' } | { kind: 'either' } {
      if (!mine.includes(input.run)) return { kind: 'refuse' };
      const plain = (t: string) => /^(0|[1-9]\d*)$/.test(t) && Number(t) <= MAX_SEQ;
      const le = input.lastEventId?.replace(/^[ \t]+|[ \t]+$/g, '');
      if (le) {
        const m = /^(.+):([^:]*)$/.exec(le);
        return m && m[1] === input.run && plain(m[2]) ? { kind: 'after', k: Number(m[2]) } : { kind: 'either' };
      }
      if (input.extraQuery.startsWith('&after_seq')) return { kind: 'either' };
      if (input.afterSeq === undefined) return { kind: 'after', k: 0 };
      return plain(input.afterSeq) ? { kind: 'after', k: Number(input.afterSeq) } : { kind: 'either' };
    }

    /**
     * One reconnect. A valid position at or past the end of the finished run has nothing to send;
     * whether the stream then ends is checked only when `endStrict` (its own property), so that
     * this one failing does not hide the others.
     */
    async function sseOne(input: SseInput, endStrict = false): Promise<string[]> {
      ledger.count('SSE reconnects');
      const want = expectation(input);
      const log = logs[input.run];
      const beyond = want.kind === 'after' && want.k >= log.length;
      const query = input.afterSeq === undefined ? input.extraQuery.replace(/^&/, '?') : `?after_seq=${input.afterSeq}${input.extraQuery}`;
      const target = `/api/v1/runs/${input.run}/events${query}`;
      const headers: Array<[string, string]> = [['X-API-Key', ALICE], ['Accept', 'text/event-stream']];
      if (input.lastEventId !== undefined) headers.push(['Last-Event-ID', input.lastEventId]);
      // A finished run replays in milliseconds: the stream limits only bound what a wrong answer costs.
      const streamMs = endStrict ? 4_000 : beyond ? 500 : want.kind === 'either' ? 1_500 : 4_000;
      const res = await rawHttp(port(), { method: 'GET', target, headers }, { timeoutMs: 8_000, streamMs });
      ledger.status(endStrict ? 'SSE resume past the end' : 'SSE reconnects', res.status ? `${res.status}${(header(res, 'x-request-id') ?? header(res, 'content-type')) !== undefined ? '' : '*'}` : res.error || 'no answer');
      const where = `GET ${target.slice(0, 150)} Last-Event-ID=${JSON.stringify(input.lastEventId)?.slice(0, 100)}`;
      const text = res.body.toString('utf8');
      const problems: string[] = [];
      if (scanner.scan(`SSE ${where}`, res.body)) problems.push(`${where}: a secret in the answer`);
      if (res.status === 0) return [`${where}: no answer (${res.error ?? 'timeout'})`];
      if (res.status >= 500) return [`${where}: ${res.status} ${text.slice(0, 200)}`];
      if (res.status >= 400) {
        let body: any;
        try {
          body = JSON.parse(text);
        } catch {
          /* reported below */
        }
        if ((header(res, 'x-request-id') ?? header(res, 'content-type')) !== undefined && (!body || typeof body.error_code !== 'string')) problems.push(`${where}: ${res.status} without an error body`);
        if (want.kind === 'after' && want.k < log.length) problems.push(`${where}: refused (${res.status} ${body?.error_code}) a valid resume position`);
        return problems;
      }
      // Nothing after the position of a finished run: 204, so an EventSource stops reconnecting.
      if (res.status === 204) {
        if (want.kind === 'refuse') return [...problems, `${where}: 204 for a run alice does not own or that does not exist`];
        if (want.kind === 'after' && want.k < log.length) return [...problems, `${where}: 204 although events after ${want.k} exist`];
        if (res.body.length > 0) return [...problems, `${where}: 204 with a body`];
        return problems;
      }
      if (res.status !== 200) return [`${where}: unexpected ${res.status}`];
      if (want.kind === 'refuse') return [`${where}: 200 for a run alice does not own or that does not exist`];
      const frames = parseSse(text);
      // A 200 that sends nothing and never ends is the past-the-end symptom: its own property reports it.
      const pastEndSymptom = res.timedOut && frames.length === 0 && want.kind === 'either';
      if (res.timedOut && (endStrict || !(beyond || pastEndSymptom))) problems.push(`${where}: the stream of a finished run did not end within ${streamMs} ms (it sent ${frames.length} frames${beyond ? `; the run's last seq is ${log.length}` : ''})`);
      let events: EventDict[];
      try {
        events = frames.filter((f) => f.id).map((f) => JSON.parse(f.data) as EventDict);
      } catch {
        return [...problems, `${where}: event data is not JSON: ${text.slice(0, 200)}`];
      }
      for (const e of events) if (!frames.some((f) => f.id === `${input.run}:${e.seq}`)) problems.push(`${where}: no frame id ${input.run}:${e.seq}`);
      if (want.kind === 'after') {
        const expected = log.filter((e) => e.seq > want.k);
        if (JSON.stringify(events) !== JSON.stringify(expected)) problems.push(`${where}: got seqs [${events.map((e) => e.seq).join(',')}], expected [${expected.map((e) => e.seq).join(',')}]`);
      } else if (events.length && JSON.stringify(events) !== JSON.stringify(log.filter((e) => e.seq >= events[0].seq))) {
        problems.push(`${where}: an invalid position got a stream that is not a whole suffix of the log: [${events.map((e) => e.seq).join(',')}]`);
      }
      return problems;
    }

    await checkProperty(ledger, 'SSE reconnects', fc.array(sseArb, { minLength: 1, maxLength: 4 }), async (batch) => {
      const problems = (await Promise.all(batch.map((i) => sseOne(i)))).flat();
      if (problems.length) {
        const death = await gatewayProblem('SSE reconnects', () => JSON.stringify(batch));
        throw new Error([...problems, ...(death ? [death] : [])].join('\n'));
      }
    }, { seed: seedFor(), numRuns: runs(230), timeLimitMs: 40_000 });

    // A client that already has the done (or claims a later seq) reconnects: nothing to send, and the stream must end.
    const pastEnd: fc.Arbitrary<SseInput> = fc.tuple(fc.constantFrom(...mine), fc.nat({ max: 5 }), fc.boolean()).map(([run, extra, viaHeader]) => {
      const k = String(logs[run].length + extra);
      return viaHeader ? { run, lastEventId: `${run}:${k}`, extraQuery: '' } : { run, afterSeq: k, extraQuery: '' };
    });
    await checkProperty(ledger, 'SSE resume at or past the end of a finished run', pastEnd, async (input) => {
      const problems = await sseOne(input, true);
      if (problems.length) throw new Error(problems.join('\n'));
    }, { seed: seedFor(), numRuns: runs(12), timeLimitMs: 30_000, shrinkMs: 6_000 });

    // Live runs: reconnect at several positions while the run still streams.
    const live = await aliceSocket();
    await checkProperty(ledger, 'SSE reconnects during a live run', fc.array(fc.nat({ max: 30 }), { minLength: 1, maxLength: 6 }), async (positions) => {
      ledger.count('SSE reconnects', positions.length);
      const ack = await live.timeout(10_000).emitWithAck('message', { type: 'chat', payload: { message: '[[chunks:30]] [[slow:15]]' } });
      if (!ack.ok) throw new Error(`live chat refused: ${ack.error_code}`);
      const runId = String(ack.run_id);
      ledger.run(runId, ack.session_id);
      const get = (k?: number) => rawHttp(port(), { method: 'GET', target: `/api/v1/runs/${runId}/events`, headers: [['X-API-Key', ALICE], ...(k === undefined ? [] : ([['Last-Event-ID', `${runId}:${k}`]] as Array<[string, string]>))] }, { timeoutMs: 30_000, streamMs: 30_000 });
      const [whole, ...answers] = await Promise.all([get(), ...positions.map((k) => get(k))]);
      const all = parseSse(whole.body.toString('utf8')).map((f) => JSON.parse(f.data) as EventDict);
      const problems: string[] = [];
      const problem = wellFormed(all);
      if (problem) problems.push(`the live stream from 0: ${problem}`);
      answers.forEach((res, i) => {
        const events = parseSse(res.body.toString('utf8')).map((f) => JSON.parse(f.data) as EventDict);
        const expected = all.filter((e) => e.seq > positions[i]);
        if (res.status !== 200 || res.timedOut || JSON.stringify(events) !== JSON.stringify(expected)) {
          problems.push(`resume at ${positions[i]}: status ${res.status}${res.timedOut ? ' (did not end)' : ''}, seqs [${events.map((e) => e.seq).join(',')}] vs [${expected.map((e) => e.seq).join(',')}]`);
        }
      });
      if (problems.length) throw new Error(problems.join('; '));
    }, { seed: seedFor(), numRuns: runs(6), timeLimitMs: 40_000 });
    live.disconnect();

    const leaked = await leakedChannels();
    if (leaked.length) ledger.failures.push(`FAIL SSE: ${leaked.length} session channel(s) stay subscribed after every SSE client left: ${leaked.slice(0, 5).join(', ')}`);
    expect(newFailures(failuresFrom, crashesFrom)).toEqual([]);
  }, 600_000);

  // ===========================================================================================
  // Tool arguments

  it('tool arguments: fuzzed calls from the model stay in the workspace, reach only allowlisted loopback, and time out instead of hanging', async () => {
    const failuresFrom = ledger.failures.length;
    const crashesFrom = ledger.crashes.length;
    const groups = toolCallGroups({ wsRoot, fuzzRoot, outsideOnly: OUTSIDE_ONLY, ports: [target.port, canary.port] });
    /** If a guard ever failed, a write must still land inside this suite's own folder. */
    const safeWrite = (c: ToolCall): ToolCall => {
      if ((c.name !== 'write_file' && c.name !== 'edit_file') || 'raw' in (c.args as object)) return c;
      const p = (toJs(c.args as Json) as { path?: unknown } | null)?.path;
      if (typeof p !== 'string') return c;
      const abs = resolve(wsRoot, p.replace(/\\/g, '/'));
      return abs.startsWith(fuzzRoot + '/') ? c : { ...c, args: obj([['path', 'files/replaced.txt'], ['content', 'x']]) };
    };
    for (const arb of Object.values(groups)) for (const c of fc.sample(arb, { seed: SEED, numRuns: 300 })) assertCallLoopbackOnly(c);

    const events = new Map<string, EventDict[]>();
    const waiters = new Map<string, () => void>();
    const openSocket = async () => {
      const s = await aliceSocket();
      s.on('event', (e: EventDict) => {
        if (!e.run_id) return;
        events.set(e.run_id, [...(events.get(e.run_id) ?? []), e]);
        waiters.get(e.run_id)?.();
      });
      return s;
    };
    let socket = await openSocket();
    let toolCalls = 0;

    /** Waits for the run's done: 'hung' when a tool call outlives its timeout by far, 'timeout' otherwise. */
    async function waitRun(runId: string, calls: number): Promise<'done' | 'hung' | 'timeout'> {
      const limit = Date.now() + 10_000 + calls * (TOOL_TIMEOUT_MS + 2_000);
      for (;;) {
        const run = events.get(runId) ?? [];
        if (run.some((e) => e.event_type === 'done')) return 'done';
        const open = run.filter((e) => e.event_type === 'tool_call' && !run.some((r) => r.event_type === 'tool_result' && r.tool_call_id === e.tool_call_id));
        const oldest = Math.min(...open.map((e) => Date.parse(e.timestamp)));
        if (Date.now() - oldest > TOOL_TIMEOUT_MS + 6_000) return 'hung';
        if (Date.now() > limit) return 'timeout';
        await new Promise<void>((r) => {
          const t = setTimeout(r, 250);
          waiters.set(runId, () => (clearTimeout(t), r()));
        });
      }
    }

    /** A worker stuck inside a tool cannot be reached: cancel the run, replace the worker, and let the run end as cancelled. */
    async function recoverFromHang(runId: string, sessionId: string): Promise<void> {
      await json('POST', `/chat/${sessionId}/cancel`, ALICE, undefined, 10_000).catch(() => undefined);
      for (const w of [...system.workers]) {
        ledger.notes.push(`killed a stuck worker (pid ${w.proc.pid}) after run ${runId} hung`);
        await w.kill();
        system.workers.splice(system.workers.indexOf(w), 1);
      }
      tap(`worker#${taps.length}`, await system.addWorker());
    }

    for (const [group, arb] of Object.entries(groups)) {
      let hung = false;
      await checkProperty(ledger, `tool arguments: ${group}`, fc.array(fc.array(arb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 2 }), async (batch) => {
        // A hang is reported with the call that hung; shrinking it would only repeat the long wait.
        if (hung) fc.pre(false);
        if (!socket.connected) socket = await openSocket();
        const canaryBefore = canary.hits.length;
        const problems: string[] = [];
        await Promise.all(batch.map(async (raw) => {
          const calls = raw.map(safeWrite);
          calls.forEach(assertCallLoopbackOnly);
          toolCalls += calls.length;
          ledger.count('tool calls', calls.length);
          const message = `fuzz tools ${calls.map((c) => `[[tool:${c.name} ${argsText(c)}]]`).join(' ')}`;
          const ack = await socket.timeout(15_000).emitWithAck('message', { type: 'chat', payload: { message } }).catch((err: Error) => ({ ok: false, error_code: err.message }));
          if (!ack.ok) {
            if (ack.error_code !== 'message_too_large') problems.push(`chat refused: ${ack.error_code} (message of ${Buffer.byteLength(message)} bytes)`);
            return;
          }
          ledger.run(ack.run_id, ack.session_id);
          const runId = String(ack.run_id);
          const outcome = await waitRun(runId, calls.length);
          const run = events.get(runId) ?? [];
          if (outcome !== 'done') {
            const pending = run.filter((e) => e.event_type === 'tool_call').filter((e) => !run.some((r) => r.event_type === 'tool_result' && r.tool_call_id === e.tool_call_id));
            problems.push(`run ${runId} ${outcome === 'hung' ? 'hung in a tool' : 'did not finish'}; calls without a result after ${TOOL_TIMEOUT_MS} ms + 6 s: ${pending.map((e) => `${e.tool_name} ${JSON.stringify(e.tool_args).slice(0, 300)}`).join(' | ') || '(none: stuck elsewhere)'}`);
            hung = true;
            await recoverFromHang(runId, ack.session_id);
            return;
          }
          const problem = wellFormed(run);
          if (problem) problems.push(`run ${runId}: ${problem}`);
          // A tool's failure is a tool_result for the model; the run itself must not fail, and
          // its row must be final once done is out (it is written just before the done).
          const workerErrors = () => (taps.filter((t) => t.name.startsWith('worker')).at(-1)?.errors() ?? []).slice(-2).map((l) => l.slice(0, 600)).join(' | ');
          for (const e of run.filter((x) => x.event_type === 'error')) problems.push(`run ${runId} failed: ${e.error_code ?? ''} ${e.error.slice(0, 200)}; worker log: ${workerErrors()}`);
          const [[row]] = (await database((db) => db.query('SELECT status, error FROM runs WHERE run_id = ?', [runId]))) as unknown as [[{ status: string; error: string | null } | undefined]];
          if (!row || row.status === 'running' || row.status === 'queued') problems.push(`run ${runId} sent its done but its row says ${row?.status ?? 'nothing'}: the session stays busy (409) for good${row?.error ? ` (${row.error.slice(0, 200)})` : ''}`);
          const results = run.filter((e) => e.event_type === 'tool_result');
          for (const tc of run.filter((e) => e.event_type === 'tool_call')) {
            const mine = results.filter((r) => r.tool_call_id === tc.tool_call_id);
            const output = (mine[0]?.result as { details?: { error_code?: string; invalid_arguments?: unknown } } | undefined)?.details;
            ledger.status('tool results', `${String(tc.tool_name).slice(0, 20)}:${mine[0]?.status ?? 'none'}${output?.error_code ? `/${output.error_code}` : output?.invalid_arguments ? '/invalid_arguments' : ''}`);
            if (mine.length !== 1) problems.push(`${tc.tool_name} call ${tc.tool_call_id} has ${mine.length} results`);
            else if (!['success', 'error', 'timeout'].includes(String(mine[0].status))) problems.push(`${tc.tool_name} result status ${mine[0].status}`);
            if (['read_file', 'ls', 'glob', 'grep', 'write_file', 'edit_file'].includes(String(tc.tool_name)) && leavesWorkspace(tc.tool_args, wsRoot) && mine[0]?.status === 'success') {
              problems.push(`${tc.tool_name} outside the workspace succeeded: ${JSON.stringify(tc.tool_args).slice(0, 300)} → ${JSON.stringify(mine[0].result).slice(0, 300)}`);
            }
          }
          const all = JSON.stringify(run);
          if (all.includes(CANARY)) problems.push(`a file from outside the workspace came back: …${excerpt(all, CANARY)}…`);
          if (all.includes(OUTSIDE_ONLY) && !calls.some((c) => argsText(c).includes(OUTSIDE_ONLY))) problems.push(`a listing of a folder outside the workspace came back: …${excerpt(all, OUTSIDE_ONLY)}…`);
          if (scanner.scan(`events of tool run ${runId}`, all)) problems.push(`a secret in the events of run ${runId}`);
        }));
        if (canary.hits.length > canaryBefore) problems.push(`a request reached the loopback server that is not allowlisted: ${canary.hits.slice(canaryBefore).join(', ')}`);
        const describe = () => batch.map((calls) => calls.map((c) => `${c.name} ${argsText(c).slice(0, 300)}`).join(' ; ')).join(' || ');
        const worker = await workersProblem(`tool arguments: ${group}`, describe);
        if (worker) problems.push(worker);
        if (problems.length) {
          const death = await gatewayProblem(`tool arguments: ${group}`, describe);
          throw new Error(`${[...problems, ...(death ? [death] : [])].join('\n')}\n  calls: ${describe()}`);
        }
      }, { seed: seedFor(), numRuns: runs({ 'odd names and broken arguments': 20, 'lone surrogates in arguments': 6, 'fetch_url, http_request': 60 }[group] ?? 40), timeLimitMs: 45_000 });
    }
    socket.disconnect();
    ledger.notes.push(`tool calls sent: ${toolCalls}; the allowlisted target got ${target.hits} requests, the canary ${canary.hits.length}`);

    const tree = outsideTree();
    const changed = [...new Set([...tree.keys(), ...outsideBefore.keys()])].filter((k) => tree.get(k) !== outsideBefore.get(k));
    if (changed.length) ledger.failures.push(`FAIL tool arguments: files outside the workspace changed: ${changed.join(', ')}`);
    expect(newFailures(failuresFrom, crashesFrom)).toEqual([]);
  }, 600_000);

  // ===========================================================================================
  // After all of it

  it('afterwards: every process is up, health is 200, every run ended with one done, stored history is intact, nothing leaked', async () => {
    const problems: string[] = [];

    // Approve the seeded request if nobody did, so its run can end.
    const decided = await json('POST', `/hitl/${ids.hitlRequest}`, ALICE, { decision: 'approve' }, 10_000);
    if (![200, 404, 409].includes(decided.status)) problems.push(`approving the seeded request answered ${decided.status}`);

    if (dead(system.gateway)) problems.push(`the gateway is down (exit ${system.gateway.proc.exitCode}, signal ${system.gateway.proc.signalCode})`);
    for (const w of system.workers) if (dead(w)) problems.push(`worker ${w.proc.pid} is down`);
    const health = await json('GET', '/health', null, undefined, 10_000);
    if (health.status !== 200) problems.push(`health answered ${health.status}: ${JSON.stringify(health.body).slice(0, 200)}`);
    for (const c of ledger.crashes) problems.push(`crash during fuzzing: ${c.split('\n')[0].slice(0, 400)}`);

    // Every 5xx seen in any category was a deliberate 503.
    for (const [category, statuses] of ledger.statuses) {
      for (const [status, n] of statuses) if (/^5\d\d$/.test(status) && status !== '503') problems.push(`${category}: ${n}× ${status}`);
    }

    // Every run: exactly one done, last, seq gapless, in the durable log. Waits (bounded) until no
    // run is queued or running and the verdict holds still. Runs of sessions a fuzzed DELETE
    // removed are gone with them (as documented); anything of theirs still stored is an orphan.
    type RunRow = { run_id: string; session_id: string; status: string };
    type Batch = { run_id: string; session_id: string; events: string };
    let verdict: string[] = [];
    let orphans: string[] = [];
    let runCount = 0;
    let doneCount = 0;
    const until = Date.now() + 45_000;
    for (let previous = ''; ; ) {
      const [[sessions], [rows], [batches], [messageCounts]] = (await database((db) => Promise.all([db.query('SELECT session_id FROM sessions'), db.query('SELECT run_id, session_id, status FROM runs'), db.query('SELECT run_id, session_id, events FROM run_events ORDER BY run_id, seq_from'), db.query('SELECT session_id, COUNT(*) AS n FROM messages GROUP BY session_id')]))) as unknown as [[Array<{ session_id: string }>], [RunRow[]], [Batch[]], [Array<{ session_id: string; n: number }>]];
      const liveSessions = new Set(sessions.map((r) => r.session_id));
      const byRun = new Map<string, EventDict[]>();
      for (const b of batches) byRun.set(b.run_id, [...(byRun.get(b.run_id) ?? []), ...(JSON.parse(b.events) as EventDict[])]);
      const known = new Set(rows.map((r) => r.run_id));
      verdict = [];
      orphans = [];
      runCount = rows.length;
      doneCount = 0;
      for (const id of ledger.runIds) {
        const sid = ledger.runSessions.get(id);
        if (!known.has(id) && !(sid && deletedSessions.has(sid))) verdict.push(`run ${id} (session ${sid}) was announced but has no row`);
      }
      for (const r of rows) {
        if (!liveSessions.has(r.session_id)) {
          orphans.push(`run row ${r.run_id} (${r.status}) of deleted session ${r.session_id}`);
          continue;
        }
        const evs = byRun.get(r.run_id) ?? [];
        if (evs.filter((e) => e.event_type === 'done').length === 1) doneCount++;
        const problem = wellFormed(evs);
        if (problem) verdict.push(`run ${r.run_id} (${r.status}): ${problem}`);
      }
      for (const m of messageCounts) if (!liveSessions.has(m.session_id)) orphans.push(`${m.n} message(s) of deleted session ${m.session_id}`);
      for (const [runId, evs] of byRun) if (!known.has(runId)) orphans.push(`events ${evs.map((e) => e.seq).join(',').slice(0, 60)} of run ${runId} whose row is gone (session ${evs[0]?.session_id} ${liveSessions.has(String(evs[0]?.session_id)) ? 'exists' : 'deleted'})`);
      const pending = rows.filter((r) => r.status === 'queued' || r.status === 'running');
      // A row still 'running' whose log already ends in done will never change: no need to wait for it.
      const wedged = pending.filter((r) => (byRun.get(r.run_id) ?? []).some((e) => e.event_type === 'done'));
      const now = JSON.stringify([verdict, orphans, pending.length]);
      if (Date.now() > until || (pending.length > 0 && wedged.length === pending.length && now === previous)) {
        verdict.push(...pending.map((r) => {
          const evs = byRun.get(r.run_id) ?? [];
          const errors = evs.filter((e) => e.event_type === 'error').map((e) => `${e.error_code ?? ''} ${e.error.slice(0, 120)}`);
          const state = evs.some((e) => e.event_type === 'done') ? `still says ${r.status} although its log ended with done` : `is still ${r.status} 45 s after the fuzzing`;
          return `run ${r.run_id} ${state} (its log: ${evs.map((e) => `${e.seq}:${e.event_type}`).join(',').slice(0, 160) || 'nothing archived'}${errors.length ? `; errors: ${errors.join(' | ')}` : ''})`;
        }));
        break;
      }
      if (pending.length === 0 && now === previous) break;
      previous = now;
      await sleep(500);
    }
    // Say what Redis (the live log) holds for each run whose durable log is wrong.
    const redis = new Redis(process.env.DATAAGENT_REDIS_URL!, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      for (let i = 0; i < verdict.length && i < 30; i++) {
        const runId = /^run ([0-9a-f-]{36}) \(/.exec(verdict[i])?.[1];
        if (!runId) continue;
        const live = (await redis.lrange(`da:run:{${runId}}:log`, 0, -1)).map((r) => JSON.parse(r) as EventDict);
        verdict[i] += `; Redis holds seqs [${live.map((e) => `${e.seq}:${e.event_type}`).join(',').slice(0, 200)}]`;
      }
    } finally {
      redis.disconnect();
    }
    problems.push(...verdict.slice(0, 30));
    if (orphans.length) problems.push(`${orphans.length} stored rows outlive the session a DELETE removed (it promises "history and runs too"): ${orphans.slice(0, 6).join('; ')}`);
    ledger.notes.push(`runs in the database: ${runCount}, with exactly one done: ${doneCount}; run ids seen in answers: ${ledger.runIds.size}; sessions deleted by the fuzzer: ${deletedSessions.size}`);

    // Stored history: the same sessions, messages and run logs as before.
    for (const [sid, before] of Object.entries(preserved.sessions)) {
      const view = await json('GET', `/sessions/${sid}`, before.key);
      const messages = await json('GET', `/sessions/${sid}/messages?limit=1000`, before.key);
      if (JSON.stringify(view.body) !== JSON.stringify(before.view)) problems.push(`session ${sid} changed: ${JSON.stringify(before.view)} → ${view.status} ${JSON.stringify(view.body)}`.slice(0, 600));
      if (JSON.stringify(messages.body) !== JSON.stringify(before.messages)) problems.push(`messages of ${sid} changed: now ${messages.status} ${JSON.stringify(messages.body).slice(0, 300)}`);
    }
    for (const [runId, log] of Object.entries(preserved.runs)) {
      const now = await fullLog(runId).catch((err: Error) => err.message);
      if (JSON.stringify(now) !== JSON.stringify(log)) problems.push(`the log of run ${runId} changed`);
    }

    // No session subscription left behind once every client is gone.
    const leaked = await leakedChannels();
    if (leaked.length) problems.push(`${leaked.length} session channel(s) still subscribed with no client left: ${leaked.slice(0, 5).join(', ')}`);

    // Secrets: answers, acks, events and frames were scanned as they came, logs line by line.
    problems.push(...scanner.hits.map((h) => `secret leaked: ${h}`));
    ledger.notes.push(`log lines scanned: ${taps.map((t) => `${t.name} ${t.lines}`).join(', ')}`);
    if (ledger.totalInputs < 10_000) problems.push(`only ${ledger.totalInputs} inputs were tried (at least 10,000 expected)`);
    expect(problems).toEqual([]);
  }, 180_000);
});

/** Whether a run of frames is a valid client sequence, and how many whole messages it carries. */
function analyseSequence(frames: FrameGen[]): { valid: boolean; messages: number; closes: boolean } {
  let messages = 0;
  let open: { opcode: number; bytes: number[] } | null = null;
  for (const f of frames) {
    if (!frameIsValid(f)) return { valid: false, messages, closes: false };
    if (f.opcode >= 8) {
      if (f.opcode === 8) return { valid: closeFrameValid(f.payload), messages, closes: true };
      continue;
    }
    if (f.opcode === 0) {
      if (!open) return { valid: false, messages, closes: false };
      open.bytes.push(...f.payload);
    } else {
      if (open) return { valid: false, messages, closes: false };
      open = { opcode: f.opcode, bytes: [...f.payload] };
    }
    if (f.fin && open) {
      if (open.opcode === 1 && !utf8(open.bytes)) return { valid: false, messages, closes: false };
      messages++;
      open = null;
    }
  }
  return { valid: true, messages, closes: false };
}

function closeFrameValid(payload: number[]): boolean {
  if (payload.length === 0) return true;
  if (payload.length === 1) return false;
  const code = (payload[0] << 8) | payload[1];
  return ((code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999)) && utf8(payload.slice(2));
}

function utf8(bytes: number[]): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(bytes));
    return true;
  } catch {
    return false;
  }
}

function excerpt(text: string, needle: string): string {
  const at = text.indexOf(needle);
  return text.slice(Math.max(0, at - 150), at + 80);
}
