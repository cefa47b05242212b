import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventDict } from '#core/events/execution-event.js';
import { api, assertWellFormedRun, connectChat, continuedView } from './support/chat-clients.js';
import { EventCollector, runEvent, sendChat, waitUntil } from './support/event-waits.js';
import { lastUserText, type RecordedRequest, type ScriptStep } from './support/scripted-llm-server.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

/**
 * kill -9 of the worker holding 50 runs, at each point of a run's life; another worker then
 * continues every run from its ledger. For each point: every run ends with exactly one done,
 * seq is gapless across the takeover, a side effect (an HTTP POST counted by the receiving
 * server, per run and so per tool call) happens at most once, and the history holds each answer once.
 */

const RUNS = 50;
const WORDS = 20;

/** The outside world: counts the POSTs each run's tool call makes; holds them open when told to. */
class EffectServer {
  readonly received = new Map<string, number>();
  hold = false;
  private readonly held: ServerResponse[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<EffectServer> {
    let self: EffectServer | undefined;
    const server = createServer((req, res) => void self!.handle(req, res));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (self = new EffectServer(server));
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get total(): number {
    return [...this.received.values()].reduce((a, b) => a + b, 0);
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const run = String((JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { run?: unknown }).run);
    this.received.set(run, (this.received.get(run) ?? 0) + 1);
    if (this.hold) this.held.push(res);
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"sent":true}');
  }

  async stop() {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

type Point = 'mid-stream' | 'mid-tool' | 'after-result' | 'hitl';

const answer = (k: string) => Array.from({ length: WORDS }, (_, i) => `r${k}w${i} `);

/** The LLM's side of each run `effect K`: a POST tool call then an answer, or (mid-stream) just the answer. */
function script(point: Point, port: number, phase: 'doomed' | 'rescuer') {
  return (req: RecordedRequest): ScriptStep[] => {
    const k = /effect (\d+)/.exec(lastUserText(req))?.[1] ?? '?';
    const afterTool = req.body.messages?.at(-1)?.role === 'tool';
    const words = answer(k).map((text) => ({ text }));
    if (point === 'mid-stream') return phase === 'doomed' ? [...words.slice(0, 8), { hang: true }] : words;
    if (!afterTool) {
      return [{ toolCall: { id: `call-${k}`, name: 'http_request', arguments: { method: 'POST', url: `http://127.0.0.1:${port}/effect`, body: { run: k } } } }];
    }
    if (point === 'after-result' && phase === 'doomed') return [{ hang: true }];
    return words;
  };
}

async function killUnderLoad(point: Point) {
  const effects = await EffectServer.start();
  // Gateway and the doomed worker start together; the script is in place before the first run is sent.
  const system = await TestSystem.start({
    workers: [{ DATAAGENT_WORKER_ID: 'doomed' }],
    env: {
      // Short, so the kill is found soon; not so short that a worker starved of CPU on a loaded
      // machine loses its locks to its own stalled check (a second, honest worker_lost).
      DATAAGENT_JOB_LOCK_MS: '3000',
      DATAAGENT_OUTBOUND_ALLOWLIST: `127.0.0.1:${effects.port}`,
      DATAAGENT_HITL_TOOLS: point === 'hitl' ? '' : 'none',
      DATAAGENT_HITL_TIMEOUT: '120',
      // Runs wait for their approval on the worker (not parked), so the kill catches them waiting: test/parked-runs.test.ts covers parked ones.
      DATAAGENT_HITL_PARK_AFTER: '600',
    },
  });
  const socket = await connectChat(system.url, TEST_API_KEY);
  const events = new EventCollector(socket);
  try {
    effects.hold = point === 'mid-tool';
    system.llm.setScript(script(point, effects.port, 'doomed'));
    const doomed = system.workers[0]!;
    const runs: Array<{ k: string; sessionId: string; runId: string }> = [];
    for (let i = 0; i < RUNS; i++) {
      const ack = await sendChat(socket, { message: `effect ${i}` });
      expect(ack.ok).toBe(true);
      runs.push({ k: String(i), sessionId: ack.session_id, runId: ack.run_id });
    }
    const has = (runId: string, match: (e: EventDict) => boolean) => events.ofRun(runId).some(match);
    // Every run at the point, then the kill.
    const atPoint: Record<Point, (runId: string) => boolean> = {
      'mid-stream': (runId) => events.ofRun(runId).filter((e) => e.event_type === 'text').length >= 5,
      'mid-tool': () => effects.total === RUNS,
      'after-result': (runId) => has(runId, (e) => e.event_type === 'tool_result') && system.llm.openStreams === RUNS,
      hitl: (runId) => has(runId, (e) => e.event_type === 'hitl_request'),
    };
    await waitUntil(() => runs.every((r) => atPoint[point](r.runId)), 30_000);
    await doomed.kill();
    const killedAt = new Map(runs.map((r) => [r.runId, events.ofRun(r.runId).at(-1)!.seq]));

    // Half the approvals arrive while no worker holds the runs; they apply when the runs continue.
    const requestOf = (runId: string) => events.ofRun(runId).find((e) => e.event_type === 'hitl_request')!.request_id;
    const approve = async (runId: string) => {
      const decided = await api(system.url, 'POST', `/hitl/${encodeURIComponent(requestOf(runId))}`, { apiKey: TEST_API_KEY, body: { decision: 'approve' } });
      expect(decided.status).toBe(200);
    };
    if (point === 'hitl') for (const r of runs.slice(0, RUNS / 2)) await approve(r.runId);

    effects.hold = false;
    system.llm.setScript(script(point, effects.port, 'rescuer'));
    await system.addWorker({ DATAAGENT_WORKER_ID: 'rescuer' });
    if (point === 'hitl') {
      // The rest are asked again by the new worker, under the same request id, and approved then.
      for (const r of runs.slice(RUNS / 2)) {
        const again = await events.next(runEvent(r.runId, 'hitl_request', (e) => e.seq > killedAt.get(r.runId)!), 30_000);
        expect(again.request_id).toBe(requestOf(r.runId));
        await approve(r.runId);
      }
    }
    await Promise.all(runs.map((r) => events.done(r.runId, 60_000)));

    for (const r of runs) {
      const run = events.ofRun(r.runId);
      assertWellFormedRun(run);
      expect(run.at(-1)).toMatchObject({ cancelled: false });
      expect(run.filter((e) => e.event_type === 'run_started').map((e) => e.worker_id)).toEqual(['doomed']);
      const errors = run.filter((e) => e.event_type === 'error');
      expect(errors).toEqual([expect.objectContaining({ error_code: 'worker_lost', recoverable: true })]);
      expect(errors[0]!.resume_after_seq).toBeLessThanOrEqual(killedAt.get(r.runId)!);
      // The client's view after it applies worker_lost holds the answer once.
      const view = continuedView(run);
      expect(view.filter((e) => e.event_type === 'text').map((e) => e.content).join('')).toBe(answer(r.k).join(''));
      if (point !== 'mid-stream') {
        // The POST reached the outside world exactly once (the doomed worker sent it, or the new one after approval).
        expect([r.k, effects.received.get(r.k)]).toEqual([r.k, 1]);
        const result = view.filter((e) => e.event_type === 'tool_result');
        expect(result).toEqual([expect.objectContaining({ tool_call_id: `call-${r.k}`, status: point === 'mid-tool' ? 'interrupted' : 'success' })]);
      }
    }
    expect(effects.received.size).toBe(point === 'mid-stream' ? 0 : RUNS);

    // The history: each answer once, whole, after the tool's message when there was one.
    for (const r of runs) {
      const { body } = await api(system.url, 'GET', `/sessions/${r.sessionId}/messages`, { apiKey: TEST_API_KEY });
      const roles = body.messages.map((m: { role: string }) => m.role);
      expect(roles).toEqual(point === 'mid-stream' ? ['user', 'assistant'] : ['user', 'assistant', 'tool', 'assistant']);
      expect(body.messages.at(-1).content).toBe(answer(r.k).join(''));
    }
  } finally {
    socket.disconnect();
    await system.stop();
    await effects.stop();
  }
}

describe('kill -9 of the worker holding 50 runs: another worker continues each one', () => {
  it('mid-LLM-stream: the cut turn is redone, the answer shown and stored once', async () => {
    await killUnderLoad('mid-stream');
  });

  it("between a tool's intent and its result: the POST is never sent again; the run reports it interrupted", async () => {
    await killUnderLoad('mid-tool');
  });

  it('after a tool result, before the next model turn: the result is replayed, not redone', async () => {
    await killUnderLoad('after-result');
  });

  it('while waiting on approval: decisions made with no worker, and after, each run the tool once', async () => {
    await killUnderLoad('hitl');
  });

  it('a worker frozen past its lock (SIGSTOP) and woken after another took its runs over stops at its next write', async () => {
    const effects = await EffectServer.start();
    const system = await TestSystem.start({
      workers: [{ DATAAGENT_WORKER_ID: 'frozen' }],
      env: { DATAAGENT_JOB_LOCK_MS: '3000', DATAAGENT_OUTBOUND_ALLOWLIST: `127.0.0.1:${effects.port}`, DATAAGENT_HITL_TOOLS: 'none' },
    });
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      // A POST, then a 40-word answer at 100 ms a word.
      system.llm.setScript((req) => {
        const k = /effect (\d+)/.exec(lastUserText(req))?.[1] ?? '?';
        if (req.body.messages?.at(-1)?.role !== 'tool') {
          return [{ toolCall: { id: `call-${k}`, name: 'http_request', arguments: { method: 'POST', url: `http://127.0.0.1:${effects.port}/effect`, body: { run: k } } } }];
        }
        return [{ chunkIntervalMs: 100 }, ...Array.from({ length: 40 }, (_, i) => ({ text: `r${k}w${i} ` }))];
      });
      const frozen = system.workers[0]!;
      const runs: Array<{ session_id: string; run_id: string }> = [];
      for (let i = 0; i < 10; i++) runs.push(await sendChat(socket, { message: `effect ${i}` }));
      const seen = () => runs.map((r) => `${r.run_id.slice(0, 8)}: ${events.ofRun(r.run_id).map((e) => (e.event_type === 'error' ? e.error_code : e.event_type)).join(',').slice(-160)}`).join('\n');
      await waitUntil(() => runs.every((r) => events.ofRun(r.run_id).filter((e) => e.event_type === 'text').length >= 3), 30_000, () => `not every run streamed 3 texts:\n${seen()}`);
      frozen.proc.kill('SIGSTOP');
      await system.addWorker({ DATAAGENT_WORKER_ID: 'rescuer' });
      await waitUntil(() => runs.every((r) => events.ofRun(r.run_id).some((e) => e.event_type === 'error' && e.error_code === 'worker_lost')), 30_000, () => `not every run was taken over:\n${seen()}`);
      // Woken with its model streams still buffered and its locks gone: it must not write again.
      frozen.proc.kill('SIGCONT');
      await Promise.all(runs.map((r) => events.done(r.run_id, 60_000)));
      await waitUntil(() => frozen.output.filter((line) => line.includes('stopped here')).length === runs.length, 30_000, () => `the woken worker stopped ${frozen.output.filter((line) => line.includes('stopped here')).length} of ${runs.length} runs; it said:\n${frozen.output.slice(-30).join('\n')}`);

      for (const [i, r] of runs.entries()) {
        const run = events.ofRun(r.run_id);
        assertWellFormedRun(run);
        expect(run.filter((e) => e.event_type === 'error').map((e) => e.error_code)).toEqual(['worker_lost']);
        const shown = continuedView(run).filter((e) => e.event_type === 'text').map((e) => e.content).join('');
        expect(shown).toBe(Array.from({ length: 40 }, (_, w) => `r${i}w${w} `).join(''));
        expect(effects.received.get(String(i))).toBe(1);
      }
      expect(frozen.proc.exitCode).toBeNull();
    } finally {
      socket.disconnect();
      await system.stop();
      await effects.stop();
    }
  });
});
