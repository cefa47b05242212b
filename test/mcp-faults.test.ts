import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventDict, ToolResultEventDict } from '#core/events/execution-event.js';
import { api, assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat, waitUntil } from './support/event-waits.js';
import { FAULT_SERVER, FaultRecord, killRecordedServers, startFaultHttp, type FaultEntry, type FaultHttpServer } from './support/mcp-fault-servers.js';
import { freePort } from './support/mcp-servers.js';
import { descendants, groupMembers, isRunning, processTable } from './support/process-tree.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

/**
 * MCP servers that fail, reached from chats through the real worker and the scripted LLM: a
 * tool that hangs, a server that crashes mid-call, output that breaks its own schema, an HTTP
 * server that drops its stream, one that answers 401. Each failure reaches the model as a
 * result that says whether trying again makes sense, the run ends with one done, and once the
 * server is back a later run reconnects, without a storm of attempts. No server process, nor
 * the grandchild an `npx`-style wrapper leaves, outlives its connection or the worker.
 */
describe('MCP servers that fail', () => {
  let system: TestSystem;
  let dir: string;
  let dropPort: number;
  let authPort: number;
  let drop: FaultHttpServer;
  let auth: FaultHttpServer;
  const record = (name: string) => new FaultRecord(join(dir, `${name}.jsonl`));
  const stdio = (mode: string, name: string, ...extra: string[]) => ({ command: process.execPath, args: [FAULT_SERVER, mode, ...extra, '--record', join(dir, `${name}.jsonl`)] });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-mcp-faults-'));
    [dropPort, authPort] = [await freePort(), await freePort()];
    [drop, auth] = await Promise.all([startFaultHttp('http', dropPort, join(dir, 'drop.jsonl')), startFaultHttp('http', authPort, join(dir, 'auth.jsonl'))]);
    const file = join(dir, 'mcp.json');
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          hang: { ...stdio('hang', 'hang'), timeout_ms: 500 },
          crash: stdio('crash', 'crash'),
          badout: stdio('bad-output', 'badout'),
          // The wrapper runs the real server as its child, which also shrugs off SIGTERM.
          wrapped: stdio('wrapper', 'wrapped', 'slow', '--ignore-sigterm'),
          drop: { url: drop.url },
          auth: { url: auth.url },
        },
      }),
    );
    system = await TestSystem.start({
      env: {
        // These faults are about the connection, and the test reads the servers' host pids and record files, which a sandbox hides (its own PID namespace, no folder but the workspace); test/sandbox-red-team.test.ts covers sandboxed servers.
        DATAAGENT_SANDBOX: 'none',
        DATAAGENT_MCP_CONFIG: file,
        DATAAGENT_OUTBOUND_ALLOWLIST: `127.0.0.1:${dropPort},127.0.0.1:${authPort}`,
        // A call that waits for a lost stream would show as a 10 s timeout instead of an error.
        DATAAGENT_MCP_CALL_TIMEOUT_MS: '10000',
        // No health ping lands inside the windows where requests are counted.
        DATAAGENT_MCP_PING_INTERVAL: '3600',
      },
    });
  });
  afterAll(async () => {
    await system?.stop();
    await Promise.all([drop?.stop(), auth?.stop()]);
    if (dir) {
      killRecordedServers(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  interface CallOutcome {
    run: EventDict[];
    sessionId: string;
    result: ToolResultEventDict;
    /** The tool message the model received in its next request. */
    toolMessage: string;
  }

  /** One chat in which the model calls `server.tool`; returns the run and what the model was told. */
  async function callTool(server: string, tool: string, args: Record<string, unknown> = {}): Promise<CallOutcome> {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: `[[tool:${server}__${tool} ${JSON.stringify(args)}]]` });
      await events.done(ack.run_id, 30_000);
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      expect(run.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
      const call = run.find((e) => e.event_type === 'tool_call')!;
      const result = run.find((e) => e.event_type === 'tool_result')!;
      const next = system.llm.requests.find((r) => r.body.messages?.some((m) => m.role === 'tool' && m.tool_call_id === call.tool_call_id));
      const toolMessage = next?.body.messages?.find((m) => m.role === 'tool' && m.tool_call_id === call.tool_call_id)?.content;
      return { run, sessionId: ack.session_id, result, toolMessage: String(toolMessage) };
    } finally {
      socket.disconnect();
    }
  }

  const retryOf = (outcome: CallOutcome) => (JSON.parse(outcome.toolMessage) as { details?: { retry?: boolean } }).details?.retry;
  const last = (rec: FaultRecord, match: (e: FaultEntry) => boolean) => rec.entries().filter(match).at(-1);

  it('a tool that hangs times out at the server’s timeout_ms, is cancelled on the server, and the server stays usable', async () => {
    const hang = record('hang');
    const outcome = await callTool('hang', 'wait');
    expect(outcome.result.status).toBe('timeout');
    expect(outcome.toolMessage).toContain('hang.wait did not answer within 500 ms; the call was cancelled. Trying again may work; if it keeps timing out, another tool may answer instead.');
    expect(retryOf(outcome)).toBe(true);

    const call = last(hang, (e) => e.event === 'call' && e.tool === 'wait')!;
    await hang.waitFor((e) => e.event === 'cancelled' && e.pid === call.pid && e.request_id === call.request_id);
    const again = await callTool('hang', 'echo', { message: 'still here' });
    expect(again.result).toMatchObject({ status: 'success', result: 'Echo: still here' });
    expect(last(hang, (e) => e.event === 'call' && e.tool === 'echo')!.pid).toBe(call.pid);
  });

  it('a stdio server that crashes mid-call gives an error, and the next run starts it again', async () => {
    const crash = record('crash');
    const outcome = await callTool('crash', 'crash');
    expect(outcome.result.status).toBe('error');
    expect(outcome.toolMessage).toContain('The crash server went away during the call to crash.crash');
    expect(outcome.toolMessage).toContain('whether it took effect is unknown. Check before trying again');
    expect(retryOf(outcome)).toBe(true);
    const crashed = last(crash, (e) => e.event === 'call' && e.tool === 'crash')!;
    const started = crash.entries().find((e) => e.event === 'start' && e.pid === crashed.pid)!;
    await waitUntil(() => groupMembers([started.pgid!]).length === 0);

    const again = await callTool('crash', 'echo', { message: 'back' });
    expect(again.result).toMatchObject({ status: 'success', result: 'Echo: back' });
    expect(last(crash, (e) => e.event === 'call' && e.tool === 'echo')!.pid).not.toBe(crashed.pid);
  });

  it('output that breaks the tool’s own outputSchema is an error that says retrying will not help', async () => {
    const outcome = await callTool('badout', 'stats');
    expect(outcome.result.status).toBe('error');
    expect(outcome.toolMessage).toContain('badout.stats returned output that breaks its own output schema');
    expect(outcome.toolMessage).toContain('trying again will not help');
    expect(retryOf(outcome)).toBe(false);
  });

  it('an HTTP server that drops its stream mid-call gives an error at once, not a timeout; restarted, it is reconnected', async () => {
    const outcome = await callTool('drop', 'drop');
    expect(outcome.result.status).toBe('error');
    expect(outcome.toolMessage).toContain('The drop server went away during the call to drop.drop (the server dropped the response stream before it answered');
    expect(outcome.toolMessage).toContain('Check before trying again');
    expect(retryOf(outcome)).toBe(true);

    await drop.stop();
    drop = await startFaultHttp('http', dropPort, join(dir, 'drop-back.jsonl'));
    const again = await callTool('drop', 'echo', { message: 'reconnected' });
    expect(again.result).toMatchObject({ status: 'success', result: 'Echo: reconnected' });
    expect(drop.record.count((e) => e.rpc === 'initialize')).toBe(1);
  });

  it('an HTTP server that answers 401 gives an error that says retrying will not help, is retried with backoff, and reconnects once it accepts again', async () => {
    // Connected while it accepted; then its credentials stop working.
    expect((await callTool('auth', 'echo', { message: 'before' })).result.status).toBe('success');
    await auth.stop();
    auth = await startFaultHttp('http-401', authPort, join(dir, 'auth-401.jsonl'));
    const refused = await callTool('auth', 'echo', { message: 'x' });
    expect(refused.result.status).toBe('error');
    expect(refused.toolMessage).toContain('The auth server refused the call to auth.echo (HTTP 401: not authorized). Trying again will not help until its credentials are fixed.');
    expect(retryOf(refused)).toBe(false);

    // Twelve runs at once all want the server: it is marked unavailable, its tools are hidden,
    // reconnects go through the backoff and breaker (at most 6 failed attempts a minute), and a
    // call the model makes anyway is told why the server is not there, not "Tool not found".
    const runs = await Promise.all(Array.from({ length: 12 }, () => callTool('auth', 'echo', { message: 'x' })));
    expect(auth.record.count((e) => e.rpc === 'initialize')).toBeGreaterThanOrEqual(1);
    expect(auth.record.count((e) => e.method === 'POST')).toBeLessThanOrEqual(1 + 6);
    for (const run of runs) {
      expect(run.toolMessage).toContain('The auth MCP server is unavailable for this turn, so auth.echo did not run');
      expect(run.toolMessage).toContain('Trying again in a later turn may work.');
    }

    await auth.stop();
    auth = await startFaultHttp('http', authPort, join(dir, 'auth-back.jsonl'));
    let outcome: CallOutcome;
    let tries = 0;
    do {
      outcome = await callTool('auth', 'echo', { message: 'back' });
      tries++;
    } while (outcome.result.status !== 'success' && tries < 400);
    expect(outcome.result).toMatchObject({ status: 'success', result: 'Echo: back' });
    // However many runs asked while it backed off, the server saw one handshake.
    expect(auth.record.count((e) => e.rpc === 'initialize')).toBe(1);
  });

  it('stopping the worker leaves no server process, wrapper or grandchild', async () => {
    const worker = system.workers[0]!;
    // Every run connects to all the configured servers: after this one, each has its process.
    expect((await callTool('wrapped', 'echo', { message: 'up' })).result.status).toBe('success');
    const starts = ['hang', 'crash', 'badout', 'wrapped'].flatMap((name) => record(name).entries().filter((e) => e.event === 'start'));
    const table = processTable();
    const live = starts.filter((e) => isRunning(e.pid!, table));
    const wrapper = live.find((e) => e.mode === 'wrapper')!;
    const grandchild = live.find((e) => e.mode === 'slow')!;
    expect(wrapper.ppid).toBe(worker.proc.pid);
    expect(grandchild).toMatchObject({ ppid: wrapper.pid, pgid: wrapper.pid });
    expect(live.map((e) => e.mode).sort()).toEqual(['bad-output', 'crash', 'hang', 'slow', 'wrapper']);
    expect(descendants(worker.proc.pid!, table)).toEqual(live.map((e) => e.pid).sort((a, b) => a! - b!));

    await worker.stop();
    await waitUntil(() => groupMembers(live.map((e) => e.pgid!)).length === 0, 5_000);
    expect(live.filter((e) => isRunning(e.pid!))).toEqual([]);
  });

  describe('on a worker whose idle connections close after a second', () => {
    let workerPid: number;
    let baseline: number[];

    beforeAll(async () => {
      // Only this worker takes runs (the first one is stopped already unless that test was skipped).
      await Promise.all(system.workers.map((w) => w.stop()));
      const worker = await system.addWorker({ DATAAGENT_MCP_IDLE_SECONDS: '1' });
      workerPid = worker.proc.pid!;
      baseline = descendants(workerPid);
    });

    it('closing an idle connection ends the wrapper and its grandchild', async () => {
      const wrapped = record('wrapped');
      const socket = await connectChat(system.url, TEST_API_KEY);
      const events = new EventCollector(socket);
      try {
        const since = Date.now();
        const ack = await sendChat(socket, { message: '[[tool:wrapped__slow {"seconds":0.5}]]' });
        const call = await wrapped.waitFor((e) => e.event === 'call' && e.tool === 'slow' && e.at >= since);
        // While the call runs, the worker's descendants hold the wrapper and the real server below it.
        const grandchild = wrapped.entries().find((e) => e.event === 'start' && e.pid === call.pid)!;
        const wrapper = wrapped.entries().find((e) => e.event === 'start' && e.pid === grandchild.ppid)!;
        expect(wrapper).toMatchObject({ mode: 'wrapper', ppid: workerPid });
        expect(descendants(workerPid)).toEqual(expect.arrayContaining([wrapper.pid, grandchild.pid]));
        const done = await events.done(ack.run_id);
        expect(done.cancelled).toBe(false);
        expect(events.ofRun(ack.run_id).find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'success', result: 'done' });

        await waitUntil(() => descendants(workerPid).length === baseline.length && groupMembers([wrapper.pgid!]).length === 0);
        expect(descendants(workerPid)).toEqual(baseline);
        expect(isRunning(grandchild.pid!)).toBe(false);
      } finally {
        socket.disconnect();
      }
    });

    it('cancelling a run during a slow MCP call ends it cancelled, and the server receives notifications/cancelled', async () => {
      const wrapped = record('wrapped');
      const socket = await connectChat(system.url, TEST_API_KEY);
      const events = new EventCollector(socket);
      try {
        const since = Date.now();
        const ack = await sendChat(socket, { message: '[[tool:wrapped__slow {"seconds":60}]]' });
        const call = await wrapped.waitFor((e) => e.event === 'call' && e.tool === 'slow' && e.at >= since);
        const answer = await api(system.url, 'POST', `/chat/${ack.session_id}/cancel`, { apiKey: TEST_API_KEY });
        expect(answer.body).toMatchObject({ cancelled: true, run_ids: [ack.run_id] });
        const done = await events.done(ack.run_id);
        expect(done.cancelled).toBe(true);
        const run = events.ofRun(ack.run_id);
        assertWellFormedRun(run);
        expect(run.map((e) => e.event_type)).toEqual(['run_queued', 'run_started', 'usage', 'tool_call', 'done']);
        // Sent when the run was cancelled, not later when the call would have timed out.
        const cancelled = await wrapped.waitFor((e) => e.event === 'cancelled' && e.pid === call.pid && e.request_id === call.request_id);
        expect(cancelled.reason).toMatch(/cancel/i);
        expect(cancelled.reason).not.toMatch(/timed out/i);
      } finally {
        socket.disconnect();
      }
    });
  });
});
