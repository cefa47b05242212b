import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventDict } from '#core/events/execution-event.js';
import { api, assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat } from './support/event-waits.js';
import { FAULT_SERVER, FaultRecord, killRecordedServers } from './support/mcp-fault-servers.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

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
            // The seed's 5 s example, and short timeouts for the first-call hangs.
            tools: { report: { timeout_ms: 5_000 }, lookup: { timeout_ms: 400 }, cancel_order: { timeout_ms: 400 } },
          },
        ],
      }),
    );
    system = await TestSystem.start({ env: { DATAAGENT_MCP_CONFIG: file } });
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
          if (e.event_type === 'hitl_request') void api(system.url, 'POST', `/hitl/${String(e.request_id)}`, { apiKey: TEST_API_KEY, body: { decision: 'approve' } });
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
});
