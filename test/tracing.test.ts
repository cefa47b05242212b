import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatToDone, waitUntil } from './support/event-waits.js';
import { FAULT_SERVER, killRecordedServers } from './support/mcp-fault-servers.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
}

/** A loopback OTLP/HTTP receiver (JSON) that keeps every span it is sent. */
async function startReceiver(): Promise<{ server: Server; endpoint: string; spans: ReceivedSpan[] }> {
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans?: Array<{ resource?: { attributes?: Attr[] }; scopeSpans?: Array<{ spans?: RawSpan[] }> }> };
        for (const rs of body.resourceSpans ?? []) {
          const service = String(attributes(rs.resource?.attributes)['service.name']);
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({ service, traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId), name: s.name, attributes: attributes(s.attributes), status: s.status ?? {} });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}`, spans };
}

interface Attr {
  key: string;
  value: Record<string, unknown>;
}
interface RawSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: Attr[];
  status?: { code?: number; message?: string };
}

function attributes(list: Attr[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, Object.values(a.value)[0]]));
}

/** OTLP/JSON ids are hex; tolerate base64 too. */
function hex(id: string | undefined): string {
  if (!id) return '';
  return /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}

/**
 * One trace from the gateway's request through the queued job to the worker's run, its model
 * calls, its tool calls and its MCP calls, exported over OTLP/HTTP to a receiver on loopback.
 */
describe('traces', () => {
  let system: TestSystem;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let dir: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    dir = mkdtempSync(join(tmpdir(), 'da-tracing-'));
    const file = join(dir, 'mcp.json');
    writeFileSync(
      file,
      JSON.stringify({ servers: [{ name: 'shop', command: process.execPath, args: [FAULT_SERVER, 'shop', '--record', join(dir, 'shop.jsonl')], tools: { report: { timeout_ms: 300 } } }] }),
    );
    // killRecordedServers reads the shop server's host pid, which a sandbox's own PID namespace would hide; test/sandbox-red-team.test.ts covers sandboxed servers.
    system = await TestSystem.start({ env: { DATAAGENT_SANDBOX: 'none', DATAAGENT_MCP_CONFIG: file, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' } });
  });
  afterAll(async () => {
    await system?.stop();
    receiver?.server.close();
    if (dir) {
      killRecordedServers(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const ofRun = (runId: string) => {
    const submit = receiver.spans.find((s) => s.name === 'chat.submit' && s.attributes['dataagent.run_id'] === runId);
    return submit ? receiver.spans.filter((s) => s.traceId === submit.traceId) : [];
  };

  it('covers gateway, job, worker run, model calls, tool calls and MCP calls in one trace', async () => {
    const run = await chatToDone(system.url, TEST_API_KEY, '[[tool:shop__get_order {"orderId":"T-1"}]]');
    const runId = String(run[0]!.run_id);
    await waitUntil(() => ofRun(runId).some((s) => s.name.startsWith('mcp.call')) && ofRun(runId).filter((s) => s.name === 'llm.call').length >= 2 && ofRun(runId).some((s) => s.name === 'agent.run'), 15_000);
    const spans = ofRun(runId);
    const one = (name: string) => spans.find((s) => s.name === name)!;
    const submit = one('chat.submit');
    const agentRun = one('agent.run');
    expect(submit).toMatchObject({ service: 'dataagent-gateway', parentSpanId: '', attributes: expect.objectContaining({ 'dataagent.session_id': run[0]!.session_id }) });
    expect(agentRun).toMatchObject({ service: 'dataagent-worker', parentSpanId: submit.spanId, attributes: expect.objectContaining({ 'dataagent.run_id': runId, 'dataagent.agent_id': 'default', 'dataagent.run_status': 'completed' }) });
    const llm = spans.filter((s) => s.name === 'llm.call');
    expect(llm.length).toBeGreaterThanOrEqual(2);
    for (const s of llm) expect(s.parentSpanId).toBe(agentRun.spanId);
    expect(one('tool.call shop.get_order')).toMatchObject({ parentSpanId: agentRun.spanId, attributes: expect.objectContaining({ 'tool.status': 'success' }) });
    expect(one('mcp.call shop.get_order')).toMatchObject({
      parentSpanId: agentRun.spanId,
      attributes: expect.objectContaining({ 'mcp.server_id': 'shop', 'mcp.status': 'ok', 'mcp.validation': 'ok', 'dataagent.trace_id': submit.traceId, 'mcp.schema_version': expect.stringMatching(/^[0-9a-f]{16}$/) }),
    });
    // Nothing the person sent is in a span.
    expect(JSON.stringify(spans)).not.toContain('T-1');
  });

  it('closes the spans of a call that timed out, with an error status', async () => {
    const run = await chatToDone(system.url, TEST_API_KEY, '[[tool:shop__report {"seconds":30}]]');
    const runId = String(run[0]!.run_id);
    await waitUntil(() => ofRun(runId).some((s) => s.name === 'mcp.call shop.report') && ofRun(runId).some((s) => s.name === 'agent.run'), 15_000);
    const spans = ofRun(runId);
    expect(spans.find((s) => s.name === 'mcp.call shop.report')).toMatchObject({ status: { code: 2 }, attributes: expect.objectContaining({ 'mcp.status': 'timeout' }) });
    expect(spans.find((s) => s.name === 'tool.call shop.report')).toMatchObject({ status: { code: 2 }, attributes: expect.objectContaining({ 'tool.status': 'timeout' }) });
  });
});
