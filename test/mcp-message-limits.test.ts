import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'socket.io-client';
import type { EventDict } from '#core/events/execution-event.js';
import { assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat } from './support/event-waits.js';
import { FAULT_SERVER, killRecordedServers, startFaultHttp, type FaultHttpServer } from './support/mcp-fault-servers.js';
import { freePort } from './support/mcp-servers.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

/** The servers' timeout_ms: a call must end within it (by the size bound, not by it), however large its answer. */
const TIMEOUT_MS = 5_000;

/**
 * MCP servers that answer what no worker should swallow whole, through the real gateway and
 * worker with the scripted LLM: 100 MB over stdio and over streamable HTTP, structuredContent
 * nested 10,000 deep. Each such call fails as a tool error that says why, within its timeout,
 * without the worker's memory growing by the answer's size, and the run goes on to its one done.
 * Meanwhile another user's plain chats on the same worker answer about as fast as on an idle
 * system (before this bound, a 50 MB answer blocked the worker's event loop for 15 s).
 */
describe('MCP messages are bounded before they are parsed', () => {
  let system: TestSystem;
  let dir: string;
  let http: FaultHttpServer;
  let alice: Socket;
  let bob: Socket;
  let aliceEvents: EventCollector;
  let bobEvents: EventCollector;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-mcp-limits-'));
    const port = await freePort();
    http = await startFaultHttp('http-huge', port, join(dir, 'bighttp.jsonl'));
    const file = join(dir, 'mcp.json');
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          bigio: { command: process.execPath, args: [FAULT_SERVER, 'huge'], timeout_ms: TIMEOUT_MS },
          bighttp: { url: http.url, timeout_ms: TIMEOUT_MS },
        },
      }),
    );
    system = await TestSystem.start({
      env: { DATAAGENT_MCP_CONFIG: file, DATAAGENT_OUTBOUND_ALLOWLIST: `127.0.0.1:${port}`, DATAAGENT_MCP_PING_INTERVAL: '3600' },
    });
    [alice, bob] = await Promise.all([connectChat(system.url, TEST_API_KEY), connectChat(system.url, OTHER_API_KEY)]);
    [aliceEvents, bobEvents] = [new EventCollector(alice), new EventCollector(bob)];
    // Both servers connected and every code path warm before anything is measured.
    await runToDone(alice, aliceEvents, '[[tool:bigio__echo {"message":"warm"}]]');
    await runToDone(alice, aliceEvents, '[[tool:bighttp__echo {"message":"warm"}]]');
    await runToDone(bob, bobEvents, 'hello');
  });

  afterAll(async () => {
    alice?.disconnect();
    bob?.disconnect();
    await system?.stop();
    await http?.stop();
    if (dir) {
      killRecordedServers(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** Sends a chat and waits for its done; returns the run's events. */
  async function runToDone(socket: Socket, events: EventCollector, message: string): Promise<EventDict[]> {
    const ack = await sendChat(socket, { message });
    await events.done(ack.run_id, 120_000);
    const run = events.ofRun(ack.run_id);
    assertWellFormedRun(run);
    return run;
  }

  /** Milliseconds from sending Bob's plain chat to its done. */
  async function plainChatMs(): Promise<number> {
    const started = performance.now();
    const run = await runToDone(bob, bobEvents, 'hello');
    expect(run.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
    return performance.now() - started;
  }

  /** The worker's resident memory, in MiB (VmRSS of /proc/<pid>/status). */
  function workerRssMb(): number {
    const status = readFileSync(`/proc/${system.workers[0]!.proc.pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) / 1024;
  }

  /**
   * Alice calls `server.dump` for 100 MB, then `server.echo`, which the server answers only once
   * the rest of the huge answer is sent (and dropped by the worker). All that time Bob chats again
   * and again. Returns her runs, the dump call's duration, Bob's idle and loaded latencies and the
   * worker's RSS growth.
   */
  async function underLoad(server: string) {
    const idle = [await plainChatMs(), await plainChatMs(), await plainChatMs()];
    const rssBefore = workerRssMb();
    const ack = await sendChat(alice, { message: `[[tool:${server}__dump {"megabytes":100}]]` });
    await aliceEvents.next((e) => e.run_id === ack.run_id && e.event_type === 'tool_call', 30_000);
    let finished = false;
    const aliceSide = (async () => {
      await aliceEvents.done(ack.run_id, 120_000);
      return runToDone(alice, aliceEvents, `[[tool:${server}__echo {"message":"still here"}]]`);
    })().finally(() => (finished = true));
    // At least one of Bob's chats is started while the answer arrives, however fast it ends.
    const loaded: number[] = [];
    do loaded.push(await plainChatMs());
    while (!finished);
    const after = await aliceSide;
    const rssAfter = workerRssMb();
    const run = aliceEvents.ofRun(ack.run_id);
    assertWellFormedRun(run);
    const call = run.find((e) => e.event_type === 'tool_call')!;
    const toolResult = run.find((e) => e.event_type === 'tool_result')!;
    return {
      run,
      toolResult,
      after: after.find((e) => e.event_type === 'tool_result'),
      callMs: Date.parse(toolResult.timestamp) - Date.parse(call.timestamp),
      idleMs: Math.max(...idle),
      loadedMs: Math.max(...loaded),
      loadedChats: loaded.length,
      rssGrowthMb: rssAfter - rssBefore,
    };
  }

  function report(what: string, o: Awaited<ReturnType<typeof underLoad>>): void {
    console.log(
      `${what}: call ended after ${o.callMs} ms (timeout_ms ${TIMEOUT_MS}); Bob's plain chat idle ${o.idleMs.toFixed(0)} ms (worst of 3), ` +
        `while the answer arrived ${o.loadedMs.toFixed(0)} ms (worst of ${o.loadedChats}); worker RSS grew ${o.rssGrowthMb.toFixed(1)} MiB`,
    );
  }

  /** The checks every oversized call passes: a tool error that says why, in time, memory kept, the run on to done, Bob unaffected. */
  function expectBounded(o: Awaited<ReturnType<typeof underLoad>>): void {
    // Ended by the size bound, so within its timeout: a call its timeout ended would be status 'timeout', saying so.
    expect(o.toolResult.status).toBe('error');
    expect(JSON.stringify(o.toolResult.result)).toContain('sent a message of more than 4 MiB (DATAAGENT_MCP_MAX_MESSAGE_BYTES)');
    expect(o.rssGrowthMb).toBeLessThan(100);
    // The model was told, and answered: the run went on to its one done.
    expect(o.run.map((e) => e.event_type).slice(-2)).toEqual(['text', 'done']);
    expect(o.run.at(-1)).toMatchObject({ cancelled: false });
    // Bob's worker kept serving him: his worst chat while the answer arrived, against his worst
    // idle one in the same run (the fault this guards against, a worker parsing the whole answer,
    // made it about 150 times as long).
    expect(o.loadedMs / o.idleMs).toBeLessThan(30);
    // The server stays usable: the rest of the huge answer was dropped, not parsed.
    expect(o.after).toMatchObject({ status: 'success', result: 'Echo: still here' });
  }

  it('a stdio tool answering 100 MB fails within its timeout as a tool error; another user’s chat is not held up', async () => {
    const outcome = await underLoad('bigio');
    report('stdio, 100 MB answer', outcome);
    expectBounded(outcome);
  });

  it('a streamable HTTP tool answering 100 MB fails within its timeout as a tool error; another user’s chat is not held up', async () => {
    const outcome = await underLoad('bighttp');
    report('streamable HTTP, 100 MB answer', outcome);
    expectBounded(outcome);
  });

  it('structuredContent nested 10,000 deep is a tool error, and the run goes on to done', async () => {
    for (const server of ['bigio', 'bighttp']) {
      const run = await runToDone(alice, aliceEvents, `[[tool:${server}__deep {"levels":10000}]]`);
      const result = run.find((e) => e.event_type === 'tool_result')!;
      expect(result.status).toBe('error');
      expect(JSON.stringify(result.result)).toContain(`MCP server ${server} sent JSON nested more than 100 levels deep`);
      expect(run.map((e) => e.event_type).slice(-2)).toEqual(['text', 'done']);
      expect(run.at(-1)).toMatchObject({ cancelled: false });
    }
  });
});
