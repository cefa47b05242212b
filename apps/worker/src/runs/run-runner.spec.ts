import type { EventDict } from '#core/events/execution-event.js';
import { AgentFactory } from '#core/engine/agent-factory.js';
import type { ChatModel, ModelChunk, ModelRequest } from '#core/llm/chat-model.js';
import { MemoryConversationStore } from '#core/session/memory-conversation-store.js';
import type { Tool } from '#core/tools/tool.js';
import { WorkerRunLifecycle } from '#core/run/run-lifecycle.js';
import { MemoryRunBackend, WRITE_NOW } from '#core/run/memory/memory-run-backend.js';
import { DecisionWaiters } from '../hitl/decision-waiters.js';
import { RedisHitlHandler } from '../hitl/redis-hitl-handler.js';
import type { EventArchiver } from './event-archiver.js';
import { RunRunner, type RunOutcome } from './run-runner.js';
import type { RunJobData } from '#core/run/run-ports.js';

/** Turn 1 calls `send` (it needs approval); turn 2 answers. */
class TwoTurns implements ChatModel {
  readonly id = 'two-turns';
  async *stream(req: ModelRequest): AsyncIterable<ModelChunk> {
    if (req.messages.some((m) => m.role === 'tool')) {
      yield { type: 'text', text: 'Sent.' };
      return;
    }
    yield { type: 'text', text: 'Sending. ' };
    yield { type: 'tool_calls', calls: [{ id: 'c1', name: 'send', arguments: { to: 'x' } }] };
  }
}

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A runner on the memory backend: everything but Redis and MySQL is the real thing. */
async function setUp(options: { timeoutMs?: number; message?: string } = {}) {
  const backend = new MemoryRunBackend();
  const store = new MemoryConversationStore();
  const sent: string[] = [];
  const send: Tool = {
    name: 'send',
    description: 'sends',
    parameters: { type: 'object' },
    sensitive: true,
    execute: async (args) => {
      sent.push(String(args.to));
      return { success: true, output: 'sent' };
    },
  };
  const agents = new AgentFactory([{ id: 'a', name: 'a', description: 'a', systemPrompt: 'be brief', model: new TwoTurns(), tools: [send] }]);
  const lifecycle = new WorkerRunLifecycle({ ...backend, rows: store, durable: WRITE_NOW, databaseUnavailable: () => false, logger: { warn: () => undefined, error: () => undefined } });
  const archived: EventDict[] = [];
  const archiver = { add: (e: EventDict) => void archived.push(e), flushRun: async () => undefined, idle: async () => undefined } as unknown as EventArchiver;
  const runner = new RunRunner({
    store,
    log: backend.log,
    lifecycle,
    ledger: backend.ledger,
    archiver,
    agents,
    workerId: 'w1',
    historyMaxBytes: 64 * 1024,
    hitlFor: (caller, park) => new RedisHitlHandler(backend.hitl, new DecisionWaiters(), caller, { timeoutMs: options.timeoutMs ?? 60_000, parkAfterMs: 0, park }),
    logger: silent,
  });
  const session = await store.sessions.create({ sessionId: 's1', tenantId: 't', userId: 'u', assistantId: 'a', title: 'x' });
  await store.runs.create({ runId: 'r1', sessionId: session.sessionId, tenantId: 't', userId: 'u', assistantId: 'a' });
  const job: RunJobData = { runId: 'r1', sessionId: 's1', tenantId: 't', userId: 'u', assistantId: 'a', message: options.message ?? 'send it', enqueuedAt: 0, firstTurn: true };
  backend.takeSlot('t', 'r1');
  await lifecycle.enqueue(job);
  const run = () => backend.process('r1', (j) => runner.run(j)) as Promise<RunOutcome>;
  // The calls' usage facts have their own specs (agent-executor-usage.spec.ts): this one follows the run's life.
  const kinds = () => backend.eventsOf('r1').map((e) => e.event_type).filter((k) => k !== 'usage');
  const requestId = () => backend.eventsOf('r1').find((e) => e.event_type === 'hitl_request')!.request_id as string;
  return { backend, store, runner, lifecycle, run, kinds, requestId, sent, archived };
}

describe('RunRunner, on plain fakes', () => {
  it('parks a run at its question: no done, the row waiting, the wait recorded, the slot still held', async () => {
    const { backend, store, run, kinds } = await setUp();
    const outcome = await run();
    expect(outcome).toEqual({ parked: expect.objectContaining({ toolCallId: 'c1', requestId: expect.stringContaining('r1:c1:') }) });
    expect(kinds()).toEqual(['run_queued', 'run_started', 'text', 'tool_call', 'hitl_request']);
    expect((await store.runs.get('r1'))?.status).toBe('waiting');
    expect(await backend.jobs.jobState('r1')).toBe('delayed');
    expect(await backend.ledger.parkedOf('r1')).toMatchObject({ seq: 6 });
    expect(backend.slotsHeld.get('t')?.has('r1')).toBe(true);
  });

  it('continues a parked run once answered, repeating nothing the client had, and ends it once', async () => {
    const { backend, store, lifecycle, run, kinds, requestId, sent } = await setUp();
    await run();
    await backend.hitl.decide(requestId(), null, 'approve');
    await lifecycle.wake('r1');
    expect(await run()).toBe('finished');
    expect(kinds()).toEqual(['run_queued', 'run_started', 'text', 'tool_call', 'hitl_request', 'tool_result', 'text', 'text', 'done']);
    expect(backend.eventsOf('r1').map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(sent).toEqual(['x']);
    expect((await store.runs.get('r1'))?.status).toBe('completed');
    expect((await store.messages.list('s1', { limit: 10, offset: 0 })).map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant']);
    expect(backend.slotsHeld.get('t')?.has('r1')).toBe(false);
  });

  it('an answer that lands while the run parks wakes it: the lifecycle looks once its job is delayed', async () => {
    const { backend, lifecycle, run, requestId } = await setUp();
    const outcome = (await run()) as { parked: { requestId: string } };
    await backend.hitl.decide(requestId(), null, 'approve');
    expect(await backend.jobs.jobState('r1')).toBe('delayed');
    await lifecycle.parked(outcome.parked as never, 'r1');
    expect(await backend.jobs.jobState('r1')).toBe('waiting');
  });

  it('a cancel ends a parked run with no worker: its call cancelled, its question closed, its row and slot', async () => {
    const { backend, store, lifecycle, run, kinds, requestId, sent } = await setUp();
    await run();
    expect(await lifecycle.cancel({ runId: 'r1', sessionId: 's1', tenantId: 't' })).toBe('ended_queued');
    expect(kinds().slice(-2)).toEqual(['tool_result', 'done']);
    expect(backend.eventsOf('r1').at(-2)).toMatchObject({ tool_call_id: 'c1', status: 'cancelled' });
    expect(backend.eventsOf('r1').at(-1)).toMatchObject({ cancelled: true, reason: 'cancelled' });
    expect((await backend.hitl.get(requestId()))?.status).toBe('cancelled');
    expect((await store.runs.get('r1'))?.status).toBe('cancelled');
    expect((await store.events.list('r1', 0)).filter((e) => e.event_type !== 'usage').length).toBe(7);
    expect(backend.slotsHeld.get('t')?.has('r1')).toBe(false);
    expect(sent).toEqual([]);
  });

  it('a cancel that finds the parked run taken is the worker’s: it ends the run without running the call', async () => {
    const { backend, store, lifecycle, run, kinds, requestId, sent } = await setUp();
    await run();
    await backend.hitl.decide(requestId(), null, 'approve');
    await lifecycle.wake('r1');
    // The cancel record lands, but a worker is taking the job at that moment: the removal finds it active.
    backend.jobStates.get('r1')!.state = 'active';
    expect(await lifecycle.cancel({ runId: 'r1', sessionId: 's1', tenantId: 't' })).toBe('running');
    backend.jobStates.get('r1')!.state = 'waiting';
    expect(await run()).toBe('finished');
    expect(kinds().slice(-2)).toEqual(['tool_result', 'done']);
    expect(backend.eventsOf('r1').at(-1)).toMatchObject({ cancelled: true });
    expect((await store.runs.get('r1'))?.status).toBe('cancelled');
    expect(sent).toEqual([]);
  });

  it('a parked run whose question expired continues to its timeout, asking nothing again', async () => {
    const { backend, store, run, kinds, sent } = await setUp({ timeoutMs: 30 });
    await run();
    await new Promise((r) => setTimeout(r, 40));
    backend.expire();
    expect(await run()).toBe('finished');
    expect(kinds()).toEqual(['run_queued', 'run_started', 'text', 'tool_call', 'hitl_request', 'tool_result', 'done']);
    expect(backend.eventsOf('r1').at(-2)).toMatchObject({ status: 'timeout' });
    expect(backend.eventsOf('r1').at(-1)).toMatchObject({ cancelled: true, reason: 'timeout' });
    expect((await store.runs.get('r1'))?.status).toBe('timeout');
    expect(sent).toEqual([]);
  });

  it('a run whose lock lapsed before it sent anything past run_started is taken back without a worker_lost', async () => {
    const { backend, run, kinds } = await setUp();
    // The first attempt (epoch 1) sent run_started, then its worker was too busy to renew the
    // job's lock: the queue handed the job out again.
    const { epoch } = (await backend.ledger.take('r1')) as { epoch: number };
    await backend.log.append({ event_type: 'run_started', session_id: 's1', run_id: 'r1', seq: 0, timestamp: new Date().toISOString(), worker_id: 'w1' } as EventDict, epoch);
    // Taken back: nothing the client has is redone, so there is nothing to tell it.
    expect(await run()).toEqual({ parked: expect.anything() });
    expect(kinds()).toEqual(['run_queued', 'run_started', 'text', 'tool_call', 'hitl_request']);
    expect(backend.eventsOf('r1').map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('a takeover after the lost worker sent events past its last step tells the client once where it resumes', async () => {
    const { backend, run, kinds } = await setUp();
    const { epoch } = (await backend.ledger.take('r1')) as { epoch: number };
    for (const event of [
      { event_type: 'run_started', worker_id: 'w0' },
      { event_type: 'text', content: 'Send' },
    ]) {
      await backend.log.append({ ...event, session_id: 's1', run_id: 'r1', seq: 0, timestamp: new Date().toISOString() } as EventDict, epoch);
    }
    await run();
    expect(kinds()).toEqual(['run_queued', 'run_started', 'text', 'error', 'text', 'tool_call', 'hitl_request']);
    expect(backend.eventsOf('r1').filter((e) => e.event_type === 'error')).toEqual([expect.objectContaining({ error_code: 'worker_lost', resume_after_seq: 2 })]);
  });

  it('a job of a run that has its done ends nothing twice', async () => {
    const { backend, store, lifecycle, run, kinds } = await setUp();
    await run();
    await lifecycle.cancel({ runId: 'r1', sessionId: 's1', tenantId: 't' });
    const events = kinds();
    await backend.jobs.enqueue(backend.jobStates.get('r1')?.data ?? { runId: 'r1', sessionId: 's1', tenantId: 't', userId: 'u', assistantId: 'a', message: 'x', enqueuedAt: 0 });
    expect(await run()).toBe('finished');
    expect(kinds()).toEqual(events);
    expect((await store.runs.get('r1'))?.status).toBe('cancelled');
  });
});
