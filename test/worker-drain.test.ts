import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventDict } from '#core/events/execution-event.js';
import { api, assertWellFormedRun, connectChat, continuedView } from './support/chat-clients.js';
import { EventCollector, runEvent, sendChat, waitUntil } from './support/event-waits.js';
import { lastUserText, type RecordedRequest, type ScriptStep } from './support/scripted-llm-server.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

/**
 * A worker told to stop (SIGTERM: scale-down, rollout) under load: it hands runs waiting for
 * approval back at once, lets short runs finish, hands back what is still going at its drain
 * deadline, and exits by itself. Another worker continues the handed-back runs: none is lost,
 * none runs twice.
 */
describe('SIGTERM to a worker under load', () => {
  let system: TestSystem;
  let effects: Server;
  const posts = new Map<string, number>();

  // Runs wait for their approval on the worker (not parked), so the drain finds them waiting there.
  beforeAll(async () => {
    effects = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const run = String((JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { run?: unknown }).run);
        posts.set(run, (posts.get(run) ?? 0) + 1);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"sent":true}');
      });
    });
    effects.listen(0, '127.0.0.1');
    await once(effects, 'listening');
    const port = (effects.address() as AddressInfo).port;
    system = await TestSystem.start({ workers: 0, env: { DATAAGENT_OUTBOUND_ALLOWLIST: `127.0.0.1:${port}`, DATAAGENT_HITL_TIMEOUT: '120', DATAAGENT_HITL_PARK_AFTER: '600' } });
    system.llm.setScript(drainScript(port));
  });
  afterAll(async () => {
    await system?.stop();
    effects?.closeAllConnections();
    await new Promise((resolve) => effects?.close(resolve));
  });

  it('hands back what it cannot finish and exits; every run ends once on the other worker, no POST twice', async () => {
    const leaving = await system.addWorker({ DATAAGENT_WORKER_ID: 'leaving', DATAAGENT_DRAIN_SECONDS: '2' });
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const kinds = [...Array(8).fill('long'), ...Array(6).fill('short'), ...Array(6).fill('approval')] as Array<'long' | 'short' | 'approval'>;
      const runs: Array<{ kind: string; k: string; sessionId: string; runId: string }> = [];
      for (const [i, kind] of kinds.entries()) {
        const ack = await sendChat(socket, { message: `${kind} ${i}` });
        runs.push({ kind, k: String(i), sessionId: ack.session_id, runId: ack.run_id });
      }
      const of = (kind: string) => runs.filter((r) => r.kind === kind);
      await waitUntil(
        () =>
          of('approval').every((r) => events.ofRun(r.runId).some((e) => e.event_type === 'hitl_request')) &&
          runs.every((r) => events.ofRun(r.runId).some((e) => e.event_type === 'run_started')),
        30_000,
      );
      await system.addWorker({ DATAAGENT_WORKER_ID: 'staying' });

      // Exits by itself (its SIGTERM handler ends the process; no SIGKILL) with the approvals still
      // undecided: it did not wait for them.
      await leaving.stop(60_000);
      expect(leaving.proc.signalCode).toBe('SIGTERM');
      for (const r of of('approval')) {
        expect(events.ofRun(r.runId).filter((e) => e.event_type === 'tool_result')).toEqual([]);
      }
      // Asked again by the other worker under the same request id; approved there.
      for (const r of of('approval')) {
        const first = events.ofRun(r.runId).find((e) => e.event_type === 'hitl_request')!;
        const again = await events.next(runEvent(r.runId, 'hitl_request', (e) => e.seq > first.seq), 30_000);
        expect(again.request_id).toBe(first.request_id);
        const decided = await api(system.url, 'POST', `/hitl/${encodeURIComponent(again.request_id)}`, { apiKey: TEST_API_KEY, body: { decision: 'approve' } });
        expect(decided.status).toBe(200);
      }
      await Promise.all(runs.map((r) => events.done(r.runId, 60_000)));

      for (const r of runs) {
        const run = events.ofRun(r.runId);
        assertWellFormedRun(run);
        expect(run.at(-1)).toMatchObject({ cancelled: false });
        const lost = run.filter((e: EventDict) => e.event_type === 'error');
        // Short runs finished on the leaving worker; the others were handed back once and continued.
        expect([r.kind, lost.map((e) => e.error_code)]).toEqual([r.kind, r.kind === 'short' ? [] : ['worker_lost']]);
        const shown = continuedView(run).filter((e) => e.event_type === 'text').map((e) => e.content).join('');
        expect(shown).toBe(answer(r.kind, r.k));
        const { body } = await api(system.url, 'GET', `/sessions/${r.sessionId}/messages`, { apiKey: TEST_API_KEY });
        expect(body.messages.at(-1).content).toBe(answer(r.kind, r.k));
        expect(body.messages.filter((m: { role: string }) => m.role === 'assistant').length).toBe(r.kind === 'approval' ? 2 : 1);
      }
      expect(Object.fromEntries(posts)).toEqual(Object.fromEntries(of('approval').map((r) => [r.k, 1])));
    } finally {
      socket.disconnect();
    }
  });

  it('a model call longer than the job lock is not taken for a dead worker', async () => {
    await Promise.all([system.addWorker({ DATAAGENT_JOB_LOCK_MS: '1000' }), system.addWorker({ DATAAGENT_JOB_LOCK_MS: '1000' })]);
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const ack = await sendChat(socket, { message: 'slow 0' });
      await events.done(ack.run_id, 30_000);
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      expect(run.filter((e) => e.event_type === 'error')).toEqual([]);
      expect(run.filter((e) => e.event_type === 'run_started')).toHaveLength(1);
    } finally {
      socket.disconnect();
    }
  });
});

function answer(kind: string, k: string): string {
  const words = kind === 'long' ? 40 : 5;
  return Array.from({ length: words }, (_, i) => `${kind}${k}w${i} `).join('');
}

/**
 * `long K`: the first time, 4 of its 40 words and then nothing, the stream open until the worker
 * lets go (longer than the second worker's start plus the 2 s drain, however slow the machine);
 * asked again (by the worker that continues the run), all 40 words. `short K`: 5 words;
 * `approval K`: a POST that needs approval, then 5 words; `slow K`: 4 s before the first token,
 * then 5 words.
 */
function drainScript(port: number) {
  const longAsked = new Set<string>();
  return (req: RecordedRequest): ScriptStep[] => {
    const [kind = '', k = ''] = lastUserText(req).split(' ');
    const words = answer(kind, k)
      .split(/(?<= )/)
      .map((text) => ({ text }));
    if (kind === 'long' && !longAsked.has(k)) {
      longAsked.add(k);
      return [...words.slice(0, 4), { hang: true }];
    }
    if (kind === 'slow') return [{ delayMs: 4_000 }, ...words];
    if (kind === 'approval' && req.body.messages?.at(-1)?.role !== 'tool') {
      return [{ toolCall: { id: `call-${k}`, name: 'http_request', arguments: { method: 'POST', url: `http://127.0.0.1:${port}/effect`, body: { run: k } } } }];
    }
    return words;
  };
}
