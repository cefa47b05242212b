import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'socket.io-client';
import type { EventDict } from '#core/events/execution-event.js';
import { api, connectChat, type HttpAnswer } from './support/chat-clients.js';
import { chatToDone, EventCollector, sendChat, sendMessage, runEvent } from './support/event-waits.js';
import { FAULT_SERVER, killRecordedServers } from './support/mcp-fault-servers.js';
import { rawUpgrade } from './support/raw-http.js';
import { TestSystem } from './support/system.js';

/** A caller: two tenants with two users and an admin each (globex has its own "alice"), and an operator. */
interface Who {
  name: string;
  key: string;
  tenant: string;
  user: string;
  role: 'user' | 'admin' | 'operator';
}

const CALLERS: Who[] = [
  { name: 'acme/alice', key: 'iso-acme-alice', tenant: 'acme', user: 'alice', role: 'user' },
  { name: 'acme/bob', key: 'iso-acme-bob', tenant: 'acme', user: 'bob', role: 'user' },
  { name: 'acme/carol (admin)', key: 'iso-acme-carol', tenant: 'acme', user: 'carol', role: 'admin' },
  { name: 'globex/alice', key: 'iso-globex-alice', tenant: 'globex', user: 'alice', role: 'user' },
  { name: 'globex/hank', key: 'iso-globex-hank', tenant: 'globex', user: 'hank', role: 'user' },
  { name: 'globex/gabe (admin)', key: 'iso-globex-gabe', tenant: 'globex', user: 'gabe', role: 'admin' },
  { name: 'ops/olga (operator)', key: 'iso-ops-olga', tenant: 'ops', user: 'olga', role: 'operator' },
];
const VICTIMS = CALLERS.filter((c) => c.role === 'user');

/** What a victim owns, and the secret strings that must never reach anyone else. */
interface Assets {
  secret: string;
  /** A session whose run finished. */
  session: string;
  run: string;
  /** A session whose run waits for the owner's approval. */
  pendingSession: string;
  pendingRun: string;
  requestId: string;
  /** An MCP server of the victim's own, with a secret header. */
  server: string;
  serverSecret: string;
}

/**
 * Isolation of tenants and users (sessions, workspaces, memory) proven by attack: every caller tries every route and channel with
 * every other user's ids (REST, SSE, Socket.IO, plain WebSocket, resume, cancel, HITL decisions,
 * MCP servers, memory, workspace files, admin routes). Each must answer 403 or 404, change
 * nothing, and carry none of the victim's secrets. Leaks are counted; the count must be 0.
 */
describe('two tenants attacking each other', () => {
  let system: TestSystem;
  let dir: string;
  const assets = new Map<string, Assets>();
  /** Each caller's own finished run: its replay, asked last, shows that earlier answers have all arrived. */
  const ownRuns = new Map<string, string>();
  const leaks: string[] = [];
  let probes = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-isolation-'));
    const mcpConfig = join(dir, 'mcp.json');
    writeFileSync(mcpConfig, JSON.stringify({ servers: [{ name: 'shop', command: process.execPath, args: [FAULT_SERVER, 'shop', '--record', join(dir, 'shop.jsonl')] }] }));
    system = await TestSystem.start({
      workers: 1,
      env: {
        // The operator's shop server records its host pid for killRecordedServers, which a sandbox's own PID namespace would hide; test/sandbox-red-team.test.ts covers sandboxed servers.
        DATAAGENT_SANDBOX: 'none',
        DATAAGENT_MULTI_TENANT: 'true',
        DATAAGENT_API_KEYS: CALLERS.map((c) => `${c.key}:${c.tenant}:${c.user}:${c.role}`).join(','),
        DATAAGENT_MCP_CONFIG: mcpConfig,
        DATAAGENT_OUTBOUND_ALLOWLIST: '127.0.0.1',
        // Runs wait for approval of http_request only, so file tools run straight away.
        DATAAGENT_HITL_TOOLS: 'http_request',
      },
    });
    for (const victim of VICTIMS) assets.set(victim.name, await plant(victim));
    for (const caller of CALLERS) ownRuns.set(caller.name, String((await chatToDone(system.url, caller.key, 'my own run'))[0]!.run_id));
  }, 180_000);
  afterAll(async () => {
    await system?.stop();
    if (dir) {
      killRecordedServers(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** A finished run, a run waiting for approval and an MCP server, each carrying the victim's secret. */
  async function plant(victim: Who): Promise<Assets> {
    const secret = `SECRET-${victim.tenant}-${victim.user}-${randomUUID().slice(0, 8)}`;
    const done = await chatToDone(system.url, victim.key, `${secret} finished run`);
    const socket = await connectChat(system.url, victim.key);
    const events = new EventCollector(socket);
    const ack = await sendChat(socket, { message: `${secret} [[tool:http_request {"url":"http://127.0.0.1:9/${secret}","method":"POST"}]]` });
    const request = await events.next(runEvent(ack.run_id, 'hitl_request'));
    socket.disconnect();
    const server = `vault_${victim.tenant}_${victim.user}`;
    const serverSecret = `Bearer ${secret}-token`;
    const created = await api(system.url, 'POST', `/users/${victim.user}/mcp-servers`, { apiKey: victim.key, body: { name: server, url: 'http://127.0.0.1:9/mcp', headers: { Authorization: serverSecret } } });
    expect(created.status).toBe(201);
    return {
      secret,
      session: String(done[0]!.session_id),
      run: String(done[0]!.run_id),
      pendingSession: ack.session_id,
      pendingRun: ack.run_id,
      requestId: request.request_id,
      server,
      serverSecret,
    };
  }

  /** Everything a victim owns that no other caller may see, as strings to look for. */
  const secretsOf = (a: Assets) => [a.secret, a.serverSecret, a.session, a.run, a.pendingSession, a.pendingRun, a.requestId];

  /** Records a leak when an answer is not 403/404, or carries any of the victim's secrets beyond what the request itself named. */
  function check(label: string, status: number | string, body: unknown, a: Assets, named: string[] = []): void {
    probes++;
    const text = typeof body === 'string' ? body : JSON.stringify(body ?? '');
    const shown = secretsOf(a).filter((s) => !named.includes(s) && text.includes(s));
    const refused = status === 403 || status === 404 || (typeof status === 'string' && /(^|_)(not_found|forbidden)$/.test(status));
    if (!refused) leaks.push(`${label}: answered ${status} ${text.slice(0, 200)}`);
    if (shown.length > 0) leaks.push(`${label}: showed ${shown.join(', ')}`);
  }

  /** REST and SSE routes with another user's session, run, request and MCP server. */
  async function attackRest(attacker: Who, victim: Who, a: Assets): Promise<void> {
    const as = { apiKey: attacker.key };
    const probe = async (method: string, path: string, body?: unknown, named: string[] = []) => {
      const answer: HttpAnswer = await api(system.url, method, path, { ...as, ...(body === undefined ? {} : { body }) });
      check(`${attacker.name} ${method} ${path}`, answer.status, answer.body, a, named);
    };
    await probe('GET', `/sessions/${a.session}`, undefined, [a.session]);
    await probe('GET', `/sessions/${a.session}/messages`, undefined, [a.session]);
    await probe('DELETE', `/sessions/${a.session}`, undefined, [a.session]);
    await probe('POST', '/chat', { session_id: a.pendingSession, message: 'mine now' }, [a.pendingSession]);
    await probe('POST', '/chat', { session_id: a.session, message: 'mine now' }, [a.session]);
    await probe('POST', `/chat/${a.pendingSession}/cancel`, undefined, [a.pendingSession]);
    await probe('POST', '/chat/stream', { session_id: a.session, message: 'stream it' }, [a.session]);
    await probe('GET', `/runs/${a.run}/events`, undefined, [a.run]);
    await probe('GET', `/runs/${a.pendingRun}/events?after_seq=0`, undefined, [a.pendingRun]);
    // A stream ticket for another's run would open its stream without their key.
    await probe('POST', `/runs/${a.run}/stream-tickets`, undefined, [a.run]);
    // A request id names its run.
    await probe('POST', `/hitl/${a.requestId}`, { decision: 'approve' }, [a.requestId, a.pendingRun]);
    await probe('POST', `/hitl/${a.requestId}`, { decision: 'reject', message: 'no' }, [a.requestId, a.pendingRun]);

    // Listings answer 200 with the caller's own things: none of the victim's may be among them.
    probes++;
    const list = await api(system.url, 'GET', '/sessions?limit=1000', as);
    if (list.status !== 200 || secretsOf(a).some((s) => JSON.stringify(list.body).includes(s))) leaks.push(`${attacker.name} GET /sessions listed ${victim.name}'s`);

    // MCP servers and memory: a user id in the path only ever names a user of the caller's own
    // tenant. An admin reaches their tenant's users, and a caller whose own id it is reaches
    // themselves: those answers may be 200, but must show nothing of the victim's.
    if (attacker.tenant === victim.tenant && attacker.role === 'admin') return;
    const ownTenantsUser = attacker.role !== 'user' || attacker.user === victim.user;
    const userProbe = async (method: string, path: string, body?: unknown) => {
      const answer: HttpAnswer = await api(system.url, method, path, { ...as, ...(body === undefined ? {} : { body }) });
      if (ownTenantsUser && answer.status < 300) {
        probes++;
        if (secretsOf(a).concat(a.server).some((s) => JSON.stringify(answer.body).includes(s))) leaks.push(`${attacker.name} ${method} ${path} showed ${victim.name}'s`);
      } else {
        check(`${attacker.name} ${method} ${path}`, answer.status, answer.body, a);
      }
    };
    await userProbe('GET', `/users/${victim.user}/mcp-servers`);
    await userProbe('GET', `/users/${victim.user}/mcp-servers/${a.server}/tools`);
    await userProbe('PUT', `/users/${victim.user}/mcp-servers/${a.server}`, { name: a.server, url: 'http://127.0.0.1:9/evil' });
    await userProbe('DELETE', `/users/${victim.user}/mcp-servers/${a.server}`);
    await userProbe('DELETE', `/users/${victim.user}/memory`);
  }

  /** Socket.IO messages naming the victim's session, run and request; no event of the victim's may arrive. */
  async function attackSocket(attacker: Who, a: Assets, label: string): Promise<void> {
    const socket: Socket = await connectChat(system.url, attacker.key);
    const seen: EventDict[] = [];
    socket.on('event', (e: EventDict) => seen.push(e));
    socket.on('error', (e: unknown) => seen.push(e as EventDict));
    try {
      const send = async (type: string, payload: Record<string, unknown>, named: string[]) => {
        const ack = await sendMessage(socket, type, payload);
        check(`${label} socket ${type} ${JSON.stringify(payload)}`, ack.ok ? 'ok' : String(ack.error_code), ack, a, named);
      };
      await send('resume', { session_id: a.pendingSession, after_seq: 0 }, [a.pendingSession]);
      await send('resume', { run_id: a.run, after_seq: 0 }, [a.run]);
      await send('resume', { session_id: a.session, run_id: a.pendingRun, after_seq: 0 }, [a.session, a.pendingRun]);
      await send('cancel', { session_id: a.pendingSession }, [a.pendingSession]);
      await send('hitl_decision', { request_id: a.requestId, decision: 'approve' }, [a.requestId, a.pendingRun]);
      await send('chat', { session_id: a.pendingSession, message: 'mine now' }, [a.pendingSession]);
      // Anything the probes let through would come before the replay of the attacker's own run, asked after them.
      const own = ownRuns.get(attacker.name)!;
      const replayed = new Promise<void>((resolve) => socket.on('event', (e: EventDict) => e.run_id === own && e.event_type === 'done' && resolve()));
      expect(await sendMessage(socket, 'resume', { run_id: own, after_seq: 0 })).toMatchObject({ ok: true, run_id: own });
      await replayed;
      probes++;
      // Refusals echo the ids the caller named; anything else about the victim's runs is a leak.
      const refusal = (e: EventDict) => e.event_type === 'error' && /not_found$/.test(e.error_code ?? '') && !JSON.stringify(e).includes(a.secret);
      const foreign = seen.filter((e) => !refusal(e)).filter((e) => [a.session, a.pendingSession, a.run, a.pendingRun].includes(e.session_id) || [a.run, a.pendingRun].includes(e.run_id) || JSON.stringify(e).includes(a.secret));
      if (foreign.length > 0) leaks.push(`${label} socket received ${foreign.length} of the victim's events: ${JSON.stringify(foreign).slice(0, 600)}`);
    } finally {
      socket.disconnect();
    }
    // Plain WebSocket: the upgrade itself is refused for another's session.
    for (const session of [a.session, a.pendingSession]) {
      const { socket: raw, status, head } = await rawUpgrade(system.url, `/ws/chat/${session}`, { 'x-api-key': attacker.key });
      raw.destroy();
      check(`${label} ws /ws/chat/${session}`, status, head, a, [session]);
    }
  }

  it('answers 403 or 404 to every route and channel with another caller’s ids, changes nothing, and leaks nothing', async () => {
    for (const victim of VICTIMS) {
      const a = assets.get(victim.name)!;
      for (const attacker of CALLERS.filter((c) => c !== victim)) {
        await attackRest(attacker, victim, a);
        await attackSocket(attacker, a, `${attacker.name} → ${victim.name}`);
      }
    }

    // Nothing changed: each victim still has their sessions and server, and their run still waits for them alone.
    for (const victim of VICTIMS) {
      const a = assets.get(victim.name)!;
      const as = { apiKey: victim.key };
      expect((await api(system.url, 'GET', `/sessions/${a.session}`, as)).status).toBe(200);
      const servers = await api(system.url, 'GET', `/users/${victim.user}/mcp-servers`, as);
      expect(servers.body.servers.map((s: { name: string }) => s.name)).toEqual([a.server]);
      expect(servers.body.servers[0].url).toBe('http://127.0.0.1:9/mcp');
      const socket = await connectChat(system.url, victim.key);
      const events = new EventCollector(socket);
      try {
        const resumed = await sendMessage(socket, 'resume', { session_id: a.pendingSession, after_seq: 0 });
        expect({ victim: victim.name, ...resumed }).toEqual({ victim: victim.name, ok: true, session_id: a.pendingSession, run_id: a.pendingRun });
        expect(await sendMessage(socket, 'hitl_decision', { request_id: a.requestId, decision: 'reject', message: 'not now' })).toMatchObject({ ok: true });
        const result = await events.next(runEvent(a.pendingRun, 'tool_result'));
        expect(result.status).toBe('rejected');
        await events.done(a.pendingRun);
      } finally {
        socket.disconnect();
      }
    }
    console.log(`isolation: ${probes} probes by ${CALLERS.length} callers against ${VICTIMS.length} users, ${leaks.length} leaks`);
    expect(leaks).toEqual([]);
  }, 300_000);

  it("keeps each tenant's memory to itself, even for two users both called alice, and an admin clears only their own tenant's", async () => {
    const acme = CALLERS[0]!;
    const globex = CALLERS[3]!;
    const systemPromptOf = (marker: string) => String(system.llm.requests.find((r) => JSON.stringify(r.body.messages).includes(marker))!.body.messages![0].content);
    const remember = async (who: Who, note: string) => {
      const run = await chatToDone(system.url, who.key, `[[tool:remember ${JSON.stringify({ note })}]] remember-${randomUUID()}`);
      expect(run.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'success' });
    };
    await remember(acme, 'acme alice note: the vault code is 1234');
    await remember(globex, 'globex alice note: lunch at noon');

    await chatToDone(system.url, globex.key, 'recall-globex-1');
    expect(systemPromptOf('recall-globex-1')).toContain('lunch at noon');
    expect(systemPromptOf('recall-globex-1')).not.toContain('vault code');
    await chatToDone(system.url, acme.key, 'recall-acme-1');
    expect(systemPromptOf('recall-acme-1')).toContain('vault code');
    expect(systemPromptOf('recall-acme-1')).not.toContain('lunch');

    // globex's admin clears "alice": globex's alice, never acme's.
    expect((await api(system.url, 'DELETE', '/users/alice/memory', { apiKey: CALLERS[5]!.key })).status).toBe(200);
    await chatToDone(system.url, acme.key, 'recall-acme-2');
    expect(systemPromptOf('recall-acme-2')).toContain('vault code');
    await chatToDone(system.url, globex.key, 'recall-globex-2');
    expect(systemPromptOf('recall-globex-2')).not.toContain('lunch');
  }, 120_000);

  it("keeps each user's workspace files to them: the same path in another tenant, and any path out of the workspace, find nothing", async () => {
    const [acmeAlice, acmeBob, , globexAlice] = CALLERS as [Who, Who, Who, Who];
    const content = `workspace secret ${randomUUID()}`;
    const wrote = await chatToDone(system.url, acmeAlice.key, `[[tool:write_file ${JSON.stringify({ path: 'files/plan.txt', content })}]] write-plan`);
    expect(wrote.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'success' });
    const readBack = await chatToDone(system.url, acmeAlice.key, `[[tool:read_file ${JSON.stringify({ path: 'files/plan.txt' })}]] read-own`);
    expect(JSON.stringify(readBack)).toContain(content);

    const attempts: Array<[Who, string]> = [
      [globexAlice, 'files/plan.txt'],
      [acmeBob, 'files/plan.txt'],
      [acmeBob, '../alice/files/plan.txt'],
      [globexAlice, '../../acme/alice/files/plan.txt'],
      [acmeBob, join(system.dataDir, 'workspaces', 'acme', 'alice', 'files', 'plan.txt')],
    ];
    for (const [who, path] of attempts) {
      const run = await chatToDone(system.url, who.key, `[[tool:read_file ${JSON.stringify({ path })}]] read-${randomUUID()}`);
      const result = run.find((e) => e.event_type === 'tool_result')!;
      expect({ who: who.name, path, status: result.status }).toEqual({ who: who.name, path, status: 'error' });
      expect(JSON.stringify(run)).not.toContain(content);
      const listing = await chatToDone(system.url, who.key, `[[tool:glob ${JSON.stringify({ pattern: '**/*' })}]] glob-${randomUUID()}`);
      expect(JSON.stringify(listing)).not.toContain('plan.txt');
    }
  }, 120_000);

  it("keeps admin routes within the admin's tenant: keys, tool bindings and the MCP call audit", async () => {
    const [, , acmeAdmin, globexAlice, , globexAdmin, operator] = CALLERS as [Who, Who, Who, Who, Who, Who, Who];
    const as = (who: Who) => ({ apiKey: who.key });
    // globex's things: an issued key, a tool binding and an MCP call in the audit.
    const globexKey = await api(system.url, 'POST', '/admin/api-keys', { ...as(globexAdmin), body: { user_id: 'gwen' } });
    expect(globexKey.status).toBe(201);
    const binding = await api(system.url, 'POST', '/admin/tool-bindings', { ...as(globexAdmin), body: { agent_id: 'default', tools: ['shop.*'] } });
    expect(binding.status).toBe(201);
    const call = await chatToDone(system.url, globexAlice.key, '[[tool:shop__get_order {"orderId":"G-1"}]] audited');
    expect(call.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'success' });
    const globexSecrets = [globexKey.body.key_id, globexKey.body.prefix, binding.body.binding_id, 'G-1', 'gwen'];

    // What the answer shows of globex beyond what the request named itself.
    const shows = (body: unknown, path: string) => globexSecrets.filter((s) => !path.includes(String(s)) && JSON.stringify(body).includes(String(s)));
    const refusedOrClean = async (method: string, path: string, body?: unknown) => {
      const answer = await api(system.url, method, path, { ...as(acmeAdmin), ...(body === undefined ? {} : { body }) });
      return { path: `${method} ${path}`, status: answer.status, shown: shows(answer.body, path) };
    };
    expect(await refusedOrClean('GET', '/admin/api-keys?tenant_id=globex')).toEqual({ path: 'GET /admin/api-keys?tenant_id=globex', status: 403, shown: [] });
    expect(await refusedOrClean('GET', '/admin/api-keys')).toEqual({ path: 'GET /admin/api-keys', status: 200, shown: [] });
    expect(await refusedOrClean('DELETE', `/admin/api-keys/${globexKey.body.key_id}`)).toEqual({ path: `DELETE /admin/api-keys/${globexKey.body.key_id}`, status: 404, shown: [] });
    expect(await refusedOrClean('POST', '/admin/api-keys', { user_id: 'mole', tenant_id: 'globex' })).toMatchObject({ status: 403, shown: [] });
    expect(await refusedOrClean('GET', '/admin/tool-bindings')).toEqual({ path: 'GET /admin/tool-bindings', status: 200, shown: [] });
    expect(await refusedOrClean('DELETE', `/admin/tool-bindings/${binding.body.binding_id}`)).toMatchObject({ status: 404, shown: [] });
    expect(await refusedOrClean('GET', '/admin/tool-calls?limit=1000')).toEqual({ path: 'GET /admin/tool-calls?limit=1000', status: 200, shown: [] });
    expect(await refusedOrClean('GET', '/admin/tenants')).toMatchObject({ status: 403 });

    // Untouched: the key works, the binding is listed; users reach no admin route at all.
    expect((await api(system.url, 'GET', '/sessions', { apiKey: globexKey.body.key })).status).toBe(200);
    expect(JSON.stringify((await api(system.url, 'GET', '/admin/tool-bindings', as(globexAdmin))).body)).toContain(binding.body.binding_id);
    for (const path of ['/admin/api-keys', '/admin/tool-bindings', '/admin/tool-calls', '/admin/tenants']) expect((await api(system.url, 'GET', path, as(globexAlice))).status).toBe(403);
    // Only the operator crosses tenants.
    expect(JSON.stringify((await api(system.url, 'GET', '/admin/api-keys?tenant_id=globex', as(operator))).body)).toContain(globexKey.body.key_id);
  }, 120_000);
});
