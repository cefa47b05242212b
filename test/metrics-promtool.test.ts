import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat } from './support/event-waits.js';
import { FAULT_SERVER, killRecordedServers } from './support/mcp-fault-servers.js';
import { checkMetrics } from './support/promtool.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

/**
 * The gateway's `/metrics` and a worker's metrics port, scraped after real traffic (a chat with
 * a built-in tool call and one with an MCP call), pass Prometheus's own linter.
 */
describe('metrics, as Prometheus reads them', () => {
  let system: TestSystem;
  let dir: string;
  let gateway: string;
  let worker: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-promtool-'));
    const file = join(dir, 'mcp.json');
    writeFileSync(file, JSON.stringify({ servers: [{ name: 'shop', command: process.execPath, args: [FAULT_SERVER, 'shop', '--record', join(dir, 'shop.jsonl')] }] }));
    system = await TestSystem.start({ env: { DATAAGENT_SANDBOX: 'none', DATAAGENT_MCP_CONFIG: file } });
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const todo = await sendChat(socket, { message: '[[chunks:3]] [[tool:write_todos {"todos":[{"content":"lint","status":"pending"}]}]]' });
      await events.done(todo.run_id);
      const mcp = await sendChat(socket, { message: '[[tool:shop__get_order {"orderId":"T-1"}]]' });
      await events.done(mcp.run_id);
    } finally {
      socket.disconnect();
    }
    [gateway, worker] = await Promise.all([fetch(`${system.url}/metrics`).then((r) => r.text()), fetch(system.workers[0]!.metricsUrl!).then((r) => r.text())]);
  });
  afterAll(async () => {
    await system?.stop();
    if (dir) {
      killRecordedServers(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("passes promtool check metrics on the gateway's and the worker's scrape", () => {
    // The scrapes hold the traffic's series, so the linter sees labelled histograms and counters too.
    expect(gateway).toMatch(/^dataagent_runs_queued_total 2$/m);
    expect(worker).toMatch(/^dataagent_mcp_call_duration_seconds_count\{.*status="ok".*\} 1$/m);
    // Both at once, so a failure shows what promtool said about each.
    expect({ gateway: checkMetrics(gateway), worker: checkMetrics(worker) }).toEqual({ gateway: { status: 0, output: '' }, worker: { status: 0, output: '' } });
  });
});
