import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventDict } from '#core/events/execution-event.js';
import { api, assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat } from './support/event-waits.js';
import { FAULT_SERVER, FaultRecord, killRecordedServers } from './support/mcp-fault-servers.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

const ADMIN = 'test-key-acme-admin';
const OTHER_ADMIN = 'test-key-globex-admin';

/**
 * MCP calls governed in the runtime, through the real worker against a server of our own:
 * arguments checked against the tool's schema before anything runs, per-tool timeouts, retries
 * for idempotent tools only, approval for destructive ones.
 */
describe('governed MCP calls', () => {
  let system: TestSystem;
  let dir: string;
  let shop: FaultRecord;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-mcp-gov-'));
    shop = new FaultRecord(join(dir, 'shop.jsonl'));
    const file = join(dir, 'mcp.json');
    writeFileSync(
      file,
      JSON.stringify({
        servers: [
          {
            name: 'shop',
            command: process.execPath,
            args: [FAULT_SERVER, 'shop', '--record', shop.file],
            timeout_ms: 30_000,
            description: 'orders of the web shop',
            trigger_keywords: ['订单', 'order status'],
            // A 5 s timeout for a slow report, and short timeouts for the first-call hangs.
            tools: { report: { timeout_ms: 5_000 }, lookup: { timeout_ms: 400 }, cancel_order: { timeout_ms: 400 } },
          },
          // The same tools under another name, and a server that is down.
          { name: 'backup', command: process.execPath, args: [FAULT_SERVER, 'shop', '--record', join(dir, 'backup.jsonl')] },
          { name: 'broken', command: join(dir, 'no-such-server') },
        ],
      }),
    );
    system = await TestSystem.start({
      // The servers write record files outside any workspace, which a sandbox would refuse; test/sandbox-red-team.test.ts covers sandboxed servers.
      env: { DATAAGENT_SANDBOX: 'none', DATAAGENT_MCP_CONFIG: file, DATAAGENT_API_KEYS: `${TEST_API_KEY}:acme:alice,${OTHER_API_KEY}:acme:bob,${ADMIN}:acme:carol:admin,${OTHER_ADMIN}:globex:dave:admin` },
    });
  });
  afterAll(async () => {
    await system?.stop();
    if (dir) {
      killRecordedServers(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** One chat; approves each hitl_request it sees when `approve` is set. Returns the run's events and the tool message the model got. */
  async function chat(message: string, approve = false): Promise<{ run: EventDict[]; told: string }> {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      if (approve) {
        socket.on('event', (e: EventDict) => {
          if (e.event_type === 'hitl_request') void api(system.url, 'POST', `/hitl/${e.request_id}`, { apiKey: TEST_API_KEY, body: { decision: 'approve' } });
        });
      }
      const ack = await sendChat(socket, { message });
      await events.done(ack.run_id, 60_000);
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      const call = run.find((e) => e.event_type === 'tool_call');
      const told = system.llm.requests.flatMap((r) => r.body.messages ?? []).find((m) => m.role === 'tool' && m.tool_call_id === call?.tool_call_id)?.content;
      return { run, told: String(told) };
    } finally {
      socket.disconnect();
    }
  }
  const resultOf = (run: EventDict[]) => run.find((e) => e.event_type === 'tool_result')!;
  const calls = (tool: string) => shop.entries().filter((e) => e.event === 'call' && e.tool === tool);

  it('refuses a call without a required orderId before it reaches the server, naming the field for the model', async () => {
    const { run, told } = await chat('[[tool:shop__get_order {}]]');
    expect(resultOf(run)).toMatchObject({ status: 'error', result: { details: { error_code: 'invalid_arguments', invalid_arguments: [{ field: 'orderId', problem: 'is required' }] } } });
    expect(told).toContain('Invalid arguments for shop.get_order: orderId is required');
    expect(calls('get_order')).toEqual([]);
    // The run goes on: the model answers after the refusal.
    expect(run.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });

    const fine = await chat('[[tool:shop__get_order {"orderId":"A-7"}]]');
    expect(resultOf(fine.run)).toMatchObject({ status: 'success', result: { text: 'order A-7: shipped', structured_content: { orderId: 'A-7', status: 'shipped' } } });
  });

  it('times out after the 5 s the tool is configured with, says so readably, and the run goes on', async () => {
    const { run, told } = await chat('[[tool:shop__report {"seconds":30}]]');
    expect(resultOf(run).status).toBe('timeout');
    expect(told).toContain('shop.report did not answer within 5000 ms; the call was cancelled. Trying again may work; if it keeps timing out, another tool may answer instead.');
    expect(run.filter((e) => e.event_type === 'text').length).toBeGreaterThan(0);
    expect(run.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
    await shop.waitFor((e) => e.event === 'cancelled' && e.tool === 'report');
  });

  it('retries an idempotent tool after a timeout, with the first call cancelled on the server', async () => {
    const { run } = await chat('[[tool:shop__lookup {"key":"k1"}]]');
    expect(resultOf(run)).toMatchObject({ status: 'success', result: 'found k1' });
    expect(calls('lookup')).toHaveLength(2);
    expect(shop.entries().filter((e) => e.event === 'cancelled' && e.tool === 'lookup')).toHaveLength(1);
  });

  it('asks before a destructive tool runs, and never retries it', async () => {
    const { run, told } = await chat('[[tool:shop__cancel_order {"orderId":"A-9"}]]', true);
    const types = run.map((e) => e.event_type);
    expect(types.indexOf('hitl_request')).toBeGreaterThan(types.indexOf('tool_call'));
    expect(run.find((e) => e.event_type === 'hitl_request')).toMatchObject({ action_request: { name: 'shop.cancel_order', args: { orderId: 'A-9' } } });
    expect(resultOf(run).status).toBe('timeout');
    expect(told).toContain('shop.cancel_order did not answer within 400 ms; the call was cancelled, but whether it took effect is unknown. It changes things: check before calling it again.');
    expect(JSON.parse(told).details).toEqual({ retry: false, reason: 'timeout', attempts: 1 });
    expect(calls('cancel_order')).toHaveLength(1);
  });

  it("puts into the prompt only the tools a message points at: none, a keyword's server, an explicit call", async () => {
    const lastRequest = () => system.llm.requests.at(-1)!.body;
    const mcpOffered = () => (lastRequest().tools ?? []).map((t) => t.function.name).filter((n) => n.includes('__'));
    const systemText = () => String(lastRequest().messages?.[0]?.content);

    await chat('hello, how are you?');
    expect(mcpOffered()).toEqual([]);
    expect(systemText()).not.toContain('MCP tools');

    await chat('我的订单 A-1 到哪了？');
    expect(mcpOffered().sort()).toEqual(['shop__cancel_order', 'shop__echo', 'shop__get_order', 'shop__lookup', 'shop__report']);
    expect(systemText()).toContain('MCP tools for this request:\n{"name":"shop.echo"');

    await chat('调用 get_order 查一下 A-1');
    expect(mcpOffered()).toEqual(expect.arrayContaining(['shop__get_order']));
    expect(mcpOffered()).not.toContain('shop__report');
  });

  it('answers a call to a server that is not running with a friendly error, and the run goes on', async () => {
    const { run, told } = await chat('[[tool:broken__anything {}]]');
    expect(resultOf(run).status).toBe('error');
    expect(told).toContain('The broken MCP server is unavailable for this turn, so broken.anything did not run');
    expect(run.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
  });

  it('records every call in the audit log, which only an admin of the tenant reads, with sizes and hashes but no payloads', async () => {
    const { run } = await chat('[[tool:shop__get_order {"orderId":"AUD-1"}]]');
    const sessionId = String(run[0]!.session_id);
    const calls = await waitForAudit(sessionId, 1);
    expect(calls).toEqual([
      expect.objectContaining({
        trace_id: expect.stringMatching(/^[0-9a-f]{32}$/),
        user_id: 'alice',
        session_id: sessionId,
        run_id: run[0]!.run_id,
        agent_id: 'default',
        api_key_id: expect.stringMatching(/^env-[0-9a-f]{12}$/),
        server_id: 'shop',
        tool_name: 'shop.get_order',
        tool_call_id: run.find((e) => e.event_type === 'tool_call')!.tool_call_id,
        schema_version: expect.stringMatching(/^[0-9a-f]{16}$/),
        validation: 'ok',
        status: 'ok',
        duration_ms: expect.any(Number),
        args_bytes: Buffer.byteLength('{"orderId":"AUD-1"}'),
        args_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      }),
    ]);
    expect(calls[0]).not.toHaveProperty('args');
    expect(JSON.stringify(calls)).not.toContain('AUD-1');

    // Earlier calls of this file, by status: refused input, timeouts, the retried lookup.
    const all = (await api(system.url, 'GET', '/admin/tool-calls?limit=1000', { apiKey: ADMIN })).body.tool_calls as Array<{ tool_name: string; status: string; validation: string }>;
    expect(all.find((c) => c.tool_name === 'shop.get_order' && c.status === 'invalid')).toMatchObject({ validation: 'invalid_input' });
    expect(all.filter((c) => c.tool_name === 'shop.report').map((c) => c.status)).toEqual(['timeout']);
    expect(all.filter((c) => c.tool_name === 'shop.lookup').map((c) => c.status)).toEqual(['ok']);
    expect((await api(system.url, 'GET', '/admin/tool-calls?status=timeout', { apiKey: ADMIN })).body.tool_calls.map((c: { tool_name: string }) => c.tool_name).sort()).toEqual(['shop.cancel_order', 'shop.report']);

    expect((await api(system.url, 'GET', '/admin/tool-calls', { apiKey: TEST_API_KEY })).body).toMatchObject({ error_code: 'admin_required' });
    expect((await api(system.url, 'GET', '/admin/tool-calls', { apiKey: OTHER_ADMIN })).body.tool_calls).toEqual([]);
    expect((await api(system.url, 'GET', '/admin/tool-calls?status=maybe', { apiKey: ADMIN })).status).toBe(422);
  });

  it("binds an assistant to one tool: others are neither offered nor run, the refusal is audited, and other tenants' bindings are apart", async () => {
    const bind = (body: unknown, key = ADMIN) => api(system.url, 'POST', '/admin/tool-bindings', { apiKey: key, body });
    expect((await bind({ agent_id: 'default', tools: ['shop.get_order'] }, TEST_API_KEY)).status).toBe(403);
    expect(await bind({ agent_id: 'default', api_key_id: 'k', tools: ['shop.get_order'] })).toMatchObject({ status: 422, body: { details: { fields: { agent_id: expect.any(Array) } } } });
    expect((await bind({ agent_id: 'default', tools: ['shop'] })).status).toBe(422);
    // Another tenant binding the same assistant changes nothing here.
    expect((await bind({ agent_id: 'default', tools: ['nothing.*'] }, OTHER_ADMIN)).status).toBe(201);
    const created = await bind({ agent_id: 'default', tools: ['shop.get_order', 'shop.get_order'] });
    expect(created).toMatchObject({ status: 201, body: { binding_id: expect.any(String), agent_id: 'default', tools: ['shop.get_order'], created_at: expect.any(String) } });
    try {
      expect((await api(system.url, 'GET', '/admin/tool-bindings', { apiKey: ADMIN })).body.bindings).toEqual([created.body]);

      const allowed = await chat('[[tool:shop__get_order {"orderId":"B-1"}]]');
      expect(resultOf(allowed.run)).toMatchObject({ status: 'success' });
      const offered = (system.llm.requests.at(-1)!.body.tools ?? []).map((t) => t.function.name).filter((n) => n.includes('__'));
      expect(offered).toEqual(['shop__get_order']);

      // The same tool name on another server is refused by the binding, while `broken` is down.
      const denied = await chat('[[tool:backup__get_order {"orderId":"B-2"}]]');
      expect(resultOf(denied.run)).toMatchObject({ status: 'error', result: { details: { error_code: 'tool_not_allowed' } } });
      expect(denied.told).toContain('backup.get_order is not allowed for this assistant (tool_not_allowed)');
      const audited = await waitForAudit(String(denied.run[0]!.session_id), 1);
      expect(audited[0]).toMatchObject({ tool_name: 'backup.get_order', server_id: 'backup', status: 'denied', validation: 'not_checked' });

      // The bound server answers while the other server with the same tool names is down.
      for (const started of new FaultRecord(join(dir, 'backup.jsonl')).entries().filter((e) => e.event === 'start')) {
        try {
          process.kill(started.pid!, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      expect(resultOf((await chat('[[tool:shop__get_order {"orderId":"B-1b"}]]')).run)).toMatchObject({ status: 'success', result: { structured_content: { orderId: 'B-1b' } } });

      // Binding by key: bob's key may use backup.* as well.
      const bobKeyId = `env-${createHash('sha256').update(OTHER_API_KEY).digest('hex').slice(0, 12)}`;
      const byKey = await bind({ api_key_id: bobKeyId, tools: ['backup.*'] });
      const bob = await chatAs(OTHER_API_KEY, '[[tool:backup__get_order {"orderId":"B-3"}]]');
      expect(resultOf(bob)).toMatchObject({ status: 'success' });
      expect(resultOf((await chat('[[tool:backup__get_order {"orderId":"B-4"}]]')).run).status).toBe('error');
      expect((await api(system.url, 'DELETE', `/admin/tool-bindings/${byKey.body.binding_id}`, { apiKey: OTHER_ADMIN })).status).toBe(404);
      expect((await api(system.url, 'DELETE', `/admin/tool-bindings/${byKey.body.binding_id}`, { apiKey: ADMIN })).status).toBe(200);
    } finally {
      expect((await api(system.url, 'DELETE', `/admin/tool-bindings/${created.body.binding_id}`, { apiKey: ADMIN })).status).toBe(200);
    }
    // Without bindings every tool is back.
    expect(resultOf((await chat('[[tool:backup__get_order {"orderId":"B-5"}]]')).run).status).toBe('success');
  });

  /** The session's audit rows once `count` have been written (the worker writes them in batches). */
  async function waitForAudit(sessionId: string, count: number): Promise<Array<Record<string, unknown>>> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const rows = (await api(system.url, 'GET', `/admin/tool-calls?session_id=${sessionId}`, { apiKey: ADMIN })).body.tool_calls as Array<Record<string, unknown>>;
      if (rows.length >= count || Date.now() > deadline) return rows;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function chatAs(apiKey: string, message: string): Promise<EventDict[]> {
    const socket = await connectChat(system.url, apiKey);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message });
      await events.done(ack.run_id, 30_000);
      return events.ofRun(ack.run_id);
    } finally {
      socket.disconnect();
    }
  }
});
