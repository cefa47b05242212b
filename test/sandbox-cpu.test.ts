// e2e lane: alone (it saturates the CPU on purpose and compares a chat's latency with its idle figure)
import { readdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { Socket } from 'socket.io-client';
import type { EventDict } from '#core/events/execution-event.js';
import { connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat, sendMessage } from './support/event-waits.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

/** alice of tenant acme saturates the CPU from her sandboxes; bob of globex chats on the same worker. */
const KEYS = `${TEST_API_KEY}:acme:alice,${OTHER_API_KEY}:globex:bob`;

/** alice's load: this many shell commands at once, each with this many busy loops (the red team ran 30 × 16). */
const RUNS = 30;
const LOOPS = 16;
/** bob's chats measured idle and then under alice's load. */
const SAMPLES = 15;

/**
 * The red team's CPU attack, through the real gateway and worker on a root worker with control
 * groups: alice's busy loops are bounded per sandbox and for her tenant as a whole, and the
 * sandboxes weigh less than the worker, so bob's chats keep their pace. The one latency ratio
 * the suite asserts (the issue asks for it): bob's p90 under load within 3× his idle p90.
 */
describe("sandbox CPU: one tenant's busy loops leave the worker to everyone else", () => {
  let system: TestSystem;
  let alice: Socket;
  let bob: Socket;
  let aliceEvents: EventCollector;
  let bobEvents: EventCollector;

  beforeAll(async () => {
    system = await TestSystem.start({
      env: {
        DATAAGENT_MULTI_TENANT: 'true',
        DATAAGENT_API_KEYS: KEYS,
        DATAAGENT_SANDBOX: 'bwrap',
        DATAAGENT_SHELL_ENABLED: 'true',
        // Under her tenant's CPU bound alice's last commands may take a minute to start all their loops: none may time out before bob is measured.
        DATAAGENT_TOOL_TIMEOUT_MS: '240000',
        DATAAGENT_HITL_TIMEOUT: '120',
        // alice's commands run without asking: what this measures is bob's pace. (With approvals,
        // 1 to 2 of her 30 commands were now and then cut off as `interrupted`, a run continued
        // twice around its parking: a lead for the flaky-test hunt, not this test's subject.)
        DATAAGENT_HITL_TOOLS: 'none',
      },
    });
    alice = await connectChat(system.url, TEST_API_KEY);
    bob = await connectChat(system.url, OTHER_API_KEY);
    aliceEvents = new EventCollector(alice);
    bobEvents = new EventCollector(bob);
  });

  afterAll(async () => {
    alice?.disconnect();
    bob?.disconnect();
    await system?.stop();
  });

  const p90 = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.ceil(samples.length * 0.9) - 1]!;

  async function bobChats(): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const started = performance.now();
      const ack = await sendChat(bob, { message: 'hello' });
      await bobEvents.done(ack.run_id, 60_000);
      out.push(performance.now() - started);
    }
    return out;
  }

  /** Resolves once `count` files named `started-*` are in `folder` (each of alice's commands makes one when its loops run). */
  function startedFiles(folder: string, count: number): { promise: Promise<void>; close: () => void } {
    let watcher: FSWatcher | undefined;
    const promise = new Promise<void>((resolve) => {
      const check = () => {
        if (readdirSync(folder).filter((name) => name.startsWith('started-')).length < count) return;
        watcher?.close();
        resolve();
      };
      watcher = watch(folder, check);
      check();
    });
    return { promise, close: () => watcher?.close() };
  }

  it(`bob's chat p90 stays within 3× his idle p90 while alice runs ${RUNS} × ${LOOPS} busy loops`, async () => {
    // Warm-up: the first chats pay for connections and caches.
    await bobChats();
    const idle = await bobChats();

    // alice's workspace exists before her commands run, so its folder can be watched.
    const approve = (event: EventDict) => {
      if (event.event_type === 'hitl_request') void sendMessage(alice, 'hitl_decision', { request_id: event.request_id, decision: 'approve' });
    };
    alice.on('event', approve);
    const warm = await sendChat(alice, { message: `[[tool:shell ${JSON.stringify({ command: 'echo ready' })}]]` });
    await aliceEvents.done(warm.run_id, 60_000);
    const files = join(system.dataDir, 'workspaces', 'acme', 'alice', 'files');
    const started = startedFiles(files, RUNS);

    const loops = `for i in $(seq ${LOOPS}); do timeout 240 sh -c 'while :; do :; done' & done`;
    const runs = await Promise.all(Array.from({ length: RUNS }, (_, n) => sendChat(alice, { message: `[[tool:shell ${JSON.stringify({ command: `${loops}; touch files/started-${n}; wait; echo done` })}]]` })));
    expect(runs.every((ack) => ack.ok)).toBe(true);
    const aliceDone = Promise.all(runs.map((ack) => aliceEvents.done(ack.run_id, 300_000)));
    try {
      // All loops run, or a command ended early (then the check below says which).
      await Promise.race([started.promise, Promise.race(runs.map((ack) => aliceEvents.done(ack.run_id, 300_000)))]);
      const loaded = await bobChats();
      const ended = runs.filter((ack) => aliceEvents.ofRun(ack.run_id).some((e) => e.event_type === 'tool_result'));
      console.log(`red team, CPU: bob's chat p90 idle ${p90(idle).toFixed(0)} ms, under ${RUNS} × ${LOOPS} busy loops ${p90(loaded).toFixed(0)} ms (${(p90(loaded) / p90(idle)).toFixed(1)}×); samples ${loaded.map((ms) => ms.toFixed(0)).join('/')}; alice's commands ended meanwhile: ${ended.length}`);
      expect(p90(loaded)).toBeLessThanOrEqual(3 * p90(idle));
      // The measurement was taken under the whole load: none of alice's commands had ended.
      expect(ended.map((ack) => JSON.stringify(aliceEvents.ofRun(ack.run_id).find((e) => e.event_type === 'tool_result')).slice(0, 400))).toEqual([]);
    } finally {
      started.close();
      // Cancelling a run kills its command's whole sandbox.
      await Promise.all(runs.map((ack) => sendMessage(alice, 'cancel', { session_id: ack.session_id })));
      await aliceDone;
      alice.off('event', approve);
    }
  }, 600_000);
});
