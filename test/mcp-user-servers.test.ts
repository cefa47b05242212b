import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { EventDict } from '#core/events/execution-event.js';
import { GLOBAL_MCP_OWNER } from '#core/mcp/mcp-catalog-store.js';
import { redisKeys } from '#transport/redis-keys.js';
import { api, assertWellFormedRun } from './support/chat-clients.js';
import { chatToDone, waitUntil } from './support/event-waits.js';
import { FAULT_SERVER, FaultRecord, killRecordedServers } from './support/mcp-fault-servers.js';
import { startEverything, type RunningServer } from './support/mcp-servers.js';
import { isRunning } from './support/process-tree.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

const ALICE = TEST_API_KEY;
const BOB = OTHER_API_KEY;

/**
 * Users' own MCP servers, registered over REST and used from chats through the real worker:
 * two users with a server of the same name see only their own tools, results, statuses and
 * catalogs; a user's server overrides a global one of that name; the catalog lands in
 * `mcp_tools`; a user's connections close when their last session ends and when they change a
 * server.
 */
describe("users' own MCP servers", () => {
  let system: TestSystem;
  let dir: string;
  let shared: RunningServer;
  const recordOf = (user: string) => new FaultRecord(join(dir, `${user}.jsonl`));
  /** A stdio fault server in `mode`, recording to the user's file. */
  const mine = (user: string, mode: string) => ({ name: 'mine', command: process.execPath, args: [FAULT_SERVER, mode, '--record', join(dir, `${user}.jsonl`)] });

  beforeAll(async () => {
    // Statuses other test files' workers left in the shared Redis.
    const redis = new Redis(process.env.DATAAGENT_REDIS_URL!);
    await redis.del(...[GLOBAL_MCP_OWNER, { tenantId: 'acme', userId: 'alice' }, { tenantId: 'acme', userId: 'bob' }].map((o) => redisKeys.mcpStatus(o.tenantId, o.userId)));
    redis.disconnect();
    shared = await startEverything('streamableHttp');
    dir = mkdtempSync(join(tmpdir(), 'da-mcp-users-'));
    const file = join(dir, 'mcp.json');
    writeFileSync(file, JSON.stringify({ servers: [{ name: 'shared', transport: 'streamable-http', url: shared.url }] }));
    system = await TestSystem.start({
      env: {
        // The test tells users' servers apart by their host pids, which a sandbox hides (its own PID namespace); test/sandbox-red-team.test.ts covers sandboxed servers.
        DATAAGENT_SANDBOX: 'none',
        DATAAGENT_MCP_CONFIG: file,
        // node runs whatever its arguments say: the operator pins each server's whole command line.
        DATAAGENT_MCP_STDIO_ALLOW: JSON.stringify(
          [['alice', 'slow'], ['bob', 'hang'], ['bob', 'slow'], ['alice-shared', 'slow']].map(([user, mode]) => ({ command: process.execPath, args: mine(user!, mode!).args })),
        ),
        DATAAGENT_OUTBOUND_ALLOWLIST: `127.0.0.1:${shared.port}`,
      },
    });
    // Same name, different servers: alice's offers `slow`, bob's `wait`, both `echo`.
    expect((await api(system.url, 'POST', '/users/alice/mcp-servers', { apiKey: ALICE, body: mine('alice', 'slow') })).status).toBe(201);
    expect((await api(system.url, 'POST', '/users/bob/mcp-servers', { apiKey: BOB, body: mine('bob', 'hang') })).status).toBe(201);
  });
  afterAll(async () => {
    await system?.stop();
    await shared?.stop();
    if (dir) {
      killRecordedServers(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** A chat; returns its events and the tools the model was offered. */
  async function chat(apiKey: string, message: string): Promise<{ run: EventDict[]; offered: string[] }> {
    const run = await chatToDone(system.url, apiKey, message);
    assertWellFormedRun(run);
    const request = system.llm.requests.findLast((r) => r.body.messages?.some((m) => m.role === 'user' && m.content === message));
    return { run, offered: (request?.body.tools ?? []).map((t) => t.function.name) };
  }
  const resultOf = (run: EventDict[]) => run.find((e) => e.event_type === 'tool_result')!;
  /** Who listens for releases in Redis now: the workers' subscriber connections. */
  const releaseListeners = async () => {
    const redis = new Redis(process.env.DATAAGENT_REDIS_URL!);
    try {
      const [, count] = (await redis.pubsub('NUMSUB', redisKeys.mcpReleaseChannel)) as [string, number];
      const clients = String(await redis.client('LIST')).split('\n').filter((line) => /name=worker-mcp/.test(line));
      return `${count} subscribed to ${redisKeys.mcpReleaseChannel}; release connections: ${clients.join(' | ') || 'none'}`;
    } finally {
      redis.disconnect();
    }
  };
  const workerSaid = (pattern: RegExp) => system.workers.flatMap((w) => w.output).filter((line) => pattern.test(line)).join('\n');

  it('gives each user their own server of one name: their tools, their process, their results', async () => {
    const alice = await chat(ALICE, '[[tool:mine__echo {"message":"from alice"}]]');
    const bob = await chat(BOB, '[[tool:mine__echo {"message":"from bob"}]]');
    expect(resultOf(alice.run)).toMatchObject({ status: 'success', result: 'Echo: from alice' });
    expect(resultOf(bob.run)).toMatchObject({ status: 'success', result: 'Echo: from bob' });
    // Offered: what an explicit call of the server gives each of them.
    const aliceOffered = (await chat(ALICE, 'use the mine tool')).offered;
    const bobOffered = (await chat(BOB, 'use the mine tool')).offered;
    expect(aliceOffered).toEqual(expect.arrayContaining(['mine__echo', 'mine__slow']));
    expect(aliceOffered).not.toContain('mine__wait');
    expect(bobOffered).toEqual(expect.arrayContaining(['mine__echo', 'mine__wait']));
    expect(bobOffered).not.toContain('mine__slow');
    expect(alice.offered).toContain('mine__echo');

    // Each call reached its owner's process only.
    const aliceCalls = recordOf('alice').entries().filter((e) => e.event === 'call');
    const bobCalls = recordOf('bob').entries().filter((e) => e.event === 'call');
    expect(aliceCalls).toHaveLength(1);
    expect(bobCalls).toHaveLength(1);
    expect(aliceCalls[0]!.pid).not.toBe(bobCalls[0]!.pid);

    // A tool only alice has is not there for bob.
    const refused = await chat(BOB, '[[tool:mine__slow {"seconds":0}]]');
    expect(resultOf(refused.run).status).toBe('error');
    expect(recordOf('alice').entries().filter((e) => e.event === 'call')).toHaveLength(1);
  });

  it("shows each user their own servers' statuses and catalogs, and the global servers they get", async () => {
    const list = async (user: string, key: string) => (await api(system.url, 'GET', `/users/${user}/mcp-servers`, { apiKey: key })).body;
    const aliceList = await list('alice', ALICE);
    expect(aliceList.servers).toEqual([expect.objectContaining({ name: 'mine', status: 'connected', tool_count: 2, last_error: null })]);
    expect(aliceList.global_servers).toEqual([expect.objectContaining({ name: 'shared', scope: 'global', status: 'connected' })]);
    expect((await list('bob', BOB)).servers).toEqual([expect.objectContaining({ name: 'mine', status: 'connected', tool_count: 2 })]);

    const tools = async (user: string, server: string, key: string) => api(system.url, 'GET', `/users/${user}/mcp-servers/${server}/tools`, { apiKey: key });
    // The worker stores a catalog off the run's path, just after it connects: wait for it to land.
    const storedTools = async (user: string, key: string, server = 'mine') => {
      let body = (await tools(user, server, key)).body;
      for (const deadline = Date.now() + 10_000; (body.version ?? null) === null && Date.now() < deadline; ) {
        await new Promise((r) => setTimeout(r, 100));
        body = (await tools(user, server, key)).body;
      }
      return body;
    };
    const aliceTools = await storedTools('alice', ALICE);
    expect(aliceTools).toMatchObject({ server_name: 'mine', scope: 'user', version: expect.any(String), partial: false });
    expect(aliceTools.tools.map((t: { name: string }) => t.name).sort()).toEqual(['mine.echo', 'mine.slow']);
    expect(aliceTools.tools[0]).toMatchObject({ input_schema: { type: 'object' }, schema_version: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect((await storedTools('bob', BOB)).tools.map((t: { name: string }) => t.name).sort()).toEqual(['mine.echo', 'mine.wait']);
    // Another user's catalog is not found; the global server's catalog is everyone's.
    expect((await tools('alice', 'mine', BOB)).status).toBe(404);
    // The global server's catalog lands the same way, off the run's path.
    const globalTools = await storedTools('bob', BOB, 'shared');
    expect(globalTools.scope).toBe('global');
    expect(globalTools.tools.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['shared.echo', 'shared.get-sum']));
    expect((await tools('bob', 'nothing', BOB)).status).toBe(404);
  });

  it("lets a user's server override a global one of the same name, for that user only", async () => {
    expect((await api(system.url, 'POST', '/users/alice/mcp-servers', { apiKey: ALICE, body: { ...mine('alice-shared', 'slow'), name: 'shared' } })).status).toBe(201);
    try {
      const alice = await chat(ALICE, '[[tool:shared__slow {"seconds":0}]]');
      expect(resultOf(alice.run)).toMatchObject({ status: 'success', result: 'done' });
      expect((await chat(ALICE, 'use the shared tool')).offered).not.toContain('shared__get-sum');
      const bob = await chat(BOB, '[[tool:shared__get-sum {"a":1,"b":2}]]');
      expect(resultOf(bob.run).status).toBe('success');
      expect(String(resultOf(bob.run).result)).toContain('3');
      const aliceList = (await api(system.url, 'GET', '/users/alice/mcp-servers', { apiKey: ALICE })).body;
      expect(aliceList.global_servers).toEqual([]);
    } finally {
      await api(system.url, 'DELETE', '/users/alice/mcp-servers/shared', { apiKey: ALICE });
    }
  });

  it("closes a user's connection when they change that server, and all of them when their last session ends", async () => {
    const started = (user: string) => recordOf(user).entries().filter((e) => e.event === 'start');
    // Bob's server is running from the tests above; its process ends when he replaces the server.
    const before = started('bob').at(-1)!;
    expect(isRunning(before.pid!)).toBe(true);
    expect((await api(system.url, 'PUT', '/users/bob/mcp-servers/mine', { apiKey: BOB, body: mine('bob', 'slow') })).status).toBe(200);
    await waitUntil(() => !isRunning(before.pid!), 10_000, () => `bob's server ${before.pid} still runs; the worker said:\n${workerSaid(/MCP|mcp/)}`);
    const { run } = await chat(BOB, '[[tool:mine__slow {"seconds":0}]]');
    expect(resultOf(run)).toMatchObject({ status: 'success', result: 'done' });
    expect((await chat(BOB, 'use the mine server')).offered).not.toContain('mine__wait');

    // Alice's server stays up while she has a session, and ends when her last one is deleted.
    const alice = started('alice').at(-1)!;
    expect(isRunning(alice.pid!)).toBe(true);
    const sessions = (await api(system.url, 'GET', '/sessions?limit=1000', { apiKey: ALICE })).body.sessions as Array<{ session_id: string }>;
    expect(sessions.length).toBeGreaterThan(1);
    for (const [i, session] of sessions.entries()) {
      expect((await api(system.url, 'DELETE', `/sessions/${session.session_id}`, { apiKey: ALICE })).status).toBe(200);
      if (i < sessions.length - 1) expect(isRunning(alice.pid!)).toBe(true);
    }
    await waitUntil(() => !isRunning(alice.pid!), 10_000, async () => `alice's server ${alice.pid} still runs; her servers started: ${JSON.stringify(started('alice'))}; ${await releaseListeners()}; the worker said:\n${workerSaid(/MCP|mcp/)}\nthe gateway said:\n${system.gateway.output.join('\n').slice(-3_000)}`);
    // Bob still has sessions: his connection stays.
    expect(isRunning(started('bob').at(-1)!.pid!)).toBe(true);
  });
});
