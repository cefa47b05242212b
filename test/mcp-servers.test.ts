import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventDict } from '#core/events/execution-event.js';
import { api, assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat, waitUntil } from './support/event-waits.js';
import { EVERYTHING, startEverything, startRecordingProxy, type RecordingProxy, type RunningServer } from './support/mcp-servers.js';
import { rawDirective } from './support/scripted-llm-server.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

/**
 * The operator's MCP servers (DATAAGENT_MCP_CONFIG) reached from a chat through the real worker
 * and the scripted LLM: server-everything over stdio, SSE and streamable HTTP.
 */
describe('MCP servers from the config file', () => {
  let system: TestSystem;
  let dir: string;
  let sse: RunningServer;
  let http: RunningServer;
  let proxy: RecordingProxy;

  beforeAll(async () => {
    [sse, http] = await Promise.all([startEverything('sse'), startEverything('streamableHttp')]);
    proxy = await startRecordingProxy(http);
    dir = mkdtempSync(join(tmpdir(), 'da-mcp-'));
    const file = join(dir, 'mcp.json');
    // The Claude Desktop shape; our own {"servers": [...]} is tested with the parser.
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          'ev-stdio': { command: process.execPath, args: [EVERYTHING, 'stdio'] },
          'ev-sse': { url: sse.url },
          'ev-http': { type: 'http', url: http.url, description: 'the everything server' },
          // The same server seen through a proxy that records what the worker sends it; calls
          // without progress time out after 1.5 s.
          'ev-watched': { type: 'http', url: proxy.url, timeout_ms: 1_500 },
        },
      }),
    );
    system = await TestSystem.start({ env: { DATAAGENT_MCP_CONFIG: file, DATAAGENT_OUTBOUND_ALLOWLIST: `127.0.0.1:${sse.port},127.0.0.1:${http.port},127.0.0.1:${proxy.port}` } });
  });
  afterAll(async () => {
    await system?.stop();
    await proxy?.stop();
    await Promise.all([sse?.stop(), http?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function chat(message: string): Promise<{ run: EventDict[]; sessionId: string }> {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message });
      await events.done(ack.run_id, 30_000);
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      return { run, sessionId: ack.session_id };
    } finally {
      socket.disconnect();
    }
  }

  it.each([
    ['stdio', 'ev-stdio'],
    ['SSE', 'ev-sse'],
    ['streamable HTTP', 'ev-http'],
  ])('over %s: echo and get-sum called from a chat reach the conversation and the history', async (_transport, server) => {
    // The model calls tools by their wire names (no dots); events and history say server.tool.
    const { run, sessionId } = await chat(`[[tool:${server}__echo {"message":"hello ${server}"}]] [[tool:${server}__get-sum {"a":2,"b":40}]]`);
    const calls = run.filter((e) => e.event_type === 'tool_call');
    expect(calls.map((e) => e.tool_name)).toEqual([`${server}.echo`, `${server}.get-sum`]);
    const results = run.filter((e) => e.event_type === 'tool_result');
    expect(results.map((e) => e.status)).toEqual(['success', 'success']);
    expect(results[0]!.result).toBe(`Echo: hello ${server}`);
    expect(String(results[1]!.result)).toContain('42');
    expect(run.at(-1)).toMatchObject({ cancelled: false });

    const { body } = await api(system.url, 'GET', `/sessions/${sessionId}/messages`, { apiKey: TEST_API_KEY });
    const tools = body.messages.filter((m: { role: string }) => m.role === 'tool');
    expect(tools.map((m: { content: string }) => m.content)).toEqual([`Echo: hello ${server}`, expect.stringContaining('42')]);
    expect(body.messages.at(-1).content).toContain(`Echo: hello ${server}`);
  });

  it('offers the tools a message points at under names their API accepts, described with their server, and none without MCP intent', async () => {
    await chat('hello');
    expect((system.llm.requests.at(-1)!.body.tools ?? []).map((t) => t.function.name).filter((n) => n.startsWith('ev-'))).toEqual([]);
    await chat('use the ev-stdio tool, then call ev-sse.get-sum and run ev-http.echo');
    const offered = (system.llm.requests.at(-1)!.body.tools ?? []).map((t) => t.function);
    const names = offered.map((f) => f.name);
    expect(names).toEqual(expect.arrayContaining(['ev-stdio__echo', 'ev-sse__get-sum', 'ev-http__echo']));
    expect(names.every((n) => /^[a-zA-Z0-9_-]{1,64}$/.test(n))).toBe(true);
    expect(offered.find((f) => f.name === 'ev-http__echo')?.description).toContain('the everything server');
  });

  it('describes an image to the model and keeps it whole in the tool_result event', async () => {
    const { run } = await chat('[[tool:ev-http__get-tiny-image {}]]');
    const result = run.find((e) => e.event_type === 'tool_result')!;
    expect(result.status).toBe('success');
    const image = (result.content as Array<{ type: string; data?: string; mimeType?: string }>).find((c) => c.type === 'image')!;
    expect(image).toMatchObject({ mimeType: 'image/png', data: expect.stringMatching(/^[A-Za-z0-9+/]{100,}={0,2}$/) });
    const call = run.find((e) => e.event_type === 'tool_call')!;
    const told = system.llm.requests.flatMap((r) => r.body.messages ?? []).find((m) => m.role === 'tool' && m.tool_call_id === call.tool_call_id)!;
    expect(String(told.content)).toMatch(/\[image image\/png, \d+ bytes\]/);
    expect(String(told.content)).not.toContain(image.data!.slice(0, 40));
  });

  it('keeps a call that reports progress alive past its timeout', async () => {
    // 3 s of work in 6 steps against a 1.5 s timeout: each progress notification restarts it.
    const { run } = await chat('[[tool:ev-watched__trigger-long-running-operation {"duration":3,"steps":6}]]');
    expect(run.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'success', result: expect.stringContaining('Long running operation completed') });
  });

  it('cancelling a run during trigger-long-running-operation ends it cancelled and sends the server notifications/cancelled', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const count = (method: string) => proxy.methods.filter((m) => m === method).length;
      const callsBefore = count('tools/call');
      const ack = await sendChat(socket, { message: '[[tool:ev-watched__trigger-long-running-operation {"duration":30,"steps":60}]]' });
      await waitUntil(() => count('tools/call') === callsBefore + 1);
      const cancelledBefore = count('notifications/cancelled');
      const sentAt = Date.now();
      const answer = await api(system.url, 'POST', `/chat/${ack.session_id}/cancel`, { apiKey: TEST_API_KEY });
      expect(answer.body).toMatchObject({ cancelled: true, run_ids: [ack.run_id] });
      const done = await events.done(ack.run_id);
      const cancelToDoneMs = Date.now() - sentAt;
      expect(done.cancelled).toBe(true);
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      expect(run.map((e) => e.event_type)).toEqual(['run_queued', 'run_started', 'usage', 'tool_call', 'done']);
      await waitUntil(() => count('notifications/cancelled') === cancelledBefore + 1);
      process.stderr.write(`[figure] cancel during trigger-long-running-operation -> done: ${cancelToDoneMs} ms\n`);
    } finally {
      socket.disconnect();
    }
  });

  it('runs a tool written as a <tool_action> tag under its dotted name', async () => {
    const { run } = await chat(rawDirective(['Adding: <tool_action name="ev-http.get-sum"><a value="1" /><b value="2" /></tool_action>']));
    expect(run.find((e) => e.event_type === 'tool_call')).toMatchObject({ tool_name: 'ev-http.get-sum', tool_args: { a: '1', b: '2' } });
    expect(run.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'success' });
  });
});
