import { DoneEvent, TextEvent } from '#core/events/execution-event.js';
import { IllegalRunTransition } from '#core/run/run-state.js';
import { MemoryConversationStore } from '#core/session/memory-conversation-store.js';
import { MemoryRunBackend, WRITE_NOW } from '#core/run/memory/memory-run-backend.js';
import { WorkerRunLifecycle } from './run-lifecycle.js';
import { RunFencedError, type DurableWrites, type RunJobData } from '#core/run/run-ports.js';

const RUN = { runId: 'r', sessionId: 's', tenantId: 't' };
const JOB: RunJobData = { ...RUN, userId: 'u', assistantId: 'a', message: 'hi', enqueuedAt: 0 };
const WAIT = { requestId: 'q', toolCallId: 'c1', until: Date.now() + 60_000 };

/** The lifecycle over the memory backend and store, with a queued run whose slot is taken. */
async function setUp(durable?: DurableWrites) {
  const backend = new MemoryRunBackend();
  const store = new MemoryConversationStore();
  await store.sessions.create({ sessionId: 's', tenantId: 't', userId: 'u', assistantId: 'a', title: 'x' });
  await store.runs.create({ runId: 'r', sessionId: 's', tenantId: 't', userId: 'u', assistantId: 'a' });
  backend.takeSlot('t', 'r');
  const lifecycle = new WorkerRunLifecycle({ ...backend, rows: store, durable: durable ?? WRITE_NOW, databaseUnavailable: () => false, logger: { warn: () => undefined, error: () => undefined } });
  await lifecycle.enqueue(JOB);
  const events = () => backend.eventsOf('r').map((e) => [e.event_type, e.seq]);
  const status = async () => (await store.runs.get('r'))?.status;
  const slotHeld = () => backend.slotsHeld.get('t')?.has('r') === true;
  /** A worker has the run: what the runner does before it runs the agent. */
  const take = async () => {
    backend.jobStates.get('r')!.state = 'active';
    const taken = await backend.ledger.take('r');
    await lifecycle.start({ runId: 'r', tenantId: 't' });
    return taken.sealed ? 0 : taken.epoch;
  };
  return { backend, store, lifecycle, events, status, slotHeld, take };
}

describe('RunLifecycle', () => {
  it('queued: run_queued is seq 1, the job is queued, the run is among its session’s active runs', async () => {
    const { backend, lifecycle, events, status } = await setUp();
    expect(events()).toEqual([['run_queued', 1]]);
    expect(await backend.jobs.jobState('r')).toBe('waiting');
    expect(await lifecycle.activeRunsOf('s', { tenantId: 't', userId: 'u' })).toEqual(['r']);
    expect(await lifecycle.activeRunsOf('s', { tenantId: 't', userId: 'other' })).toEqual([]);
    expect(await status()).toBe('queued');
  });

  it('queued → failed: a run that could not be queued ends failed and gives its slot back', async () => {
    const { lifecycle, status, slotHeld } = await setUp();
    await lifecycle.abandon(RUN, true);
    expect(await status()).toBe('failed');
    expect(slotHeld()).toBe(false);
  });

  it('a run refused before its row was written gives back only its slot', async () => {
    const { lifecycle, status, slotHeld } = await setUp();
    await lifecycle.abandon(RUN, false);
    expect(await status()).toBe('queued');
    expect(slotHeld()).toBe(false);
  });

  it('queued → cancelled: no worker holds it, so it ends here with its done, row, archive and slot', async () => {
    const { backend, store, lifecycle, events, status, slotHeld } = await setUp();
    expect(await lifecycle.cancel(RUN)).toBe('ended_queued');
    expect(events()).toEqual([['run_queued', 1], ['done', 2]]);
    expect(backend.eventsOf('r').at(-1)).toMatchObject({ cancelled: true, reason: 'cancelled' });
    expect(await status()).toBe('cancelled');
    expect((await store.events.list('r', 0)).map((e) => e.seq)).toEqual([1, 2]);
    expect(slotHeld()).toBe(false);
    expect(await backend.jobs.jobState('r')).toBe('unknown');
  });

  it('queued → running: a worker’s start marks the row; a cancel then is the worker’s to carry out', async () => {
    const { backend, lifecycle, events, status, take } = await setUp();
    await take();
    expect(await status()).toBe('running');
    expect(await lifecycle.cancel(RUN)).toBe('running');
    expect(events()).toEqual([['run_queued', 1]]);
    expect(await backend.log.isCancelRequested('r')).toBe(true);
  });

  it.each(['completed', 'failed', 'cancelled'] as const)('running → %s: the row, then the slot, then the done', async (ending) => {
    const { backend, store, lifecycle, events, status, slotHeld, take } = await setUp();
    const epoch = await take();
    const order: string[] = [];
    const markFinished = store.runs.markFinished;
    store.runs.markFinished = async (...args) => (order.push(`row:${slotHeld()}`), markFinished(...args));
    const result = await lifecycle.finish(RUN, epoch, { status: ending, messages: [{ sessionId: 's', runId: 'r', role: 'assistant', content: 'hello', metadata: {} }] });
    expect(result.status).toBe('appended');
    expect(order).toEqual(['row:true']);
    expect(events()).toEqual([['run_queued', 1], ['done', 2]]);
    expect(backend.eventsOf('r').at(-1)).toMatchObject({ cancelled: ending === 'cancelled' });
    expect(await status()).toBe(ending);
    expect(slotHeld()).toBe(false);
    expect((await store.messages.list('s', { limit: 5, offset: 0 })).map((m) => m.content)).toEqual(['hello']);
  });

  it('a second end finds the run sealed: one done, the first end’s row', async () => {
    const { lifecycle, events, status, take } = await setUp();
    const epoch = await take();
    await lifecycle.finish(RUN, epoch, { status: 'completed', messages: [] });
    expect((await lifecycle.finish(RUN, epoch, { status: 'failed', messages: [] })).status).toBe('sealed');
    expect(events()).toEqual([['run_queued', 1], ['done', 2]]);
    expect(await status()).toBe('completed');
    expect(await lifecycle.cancel(RUN)).toBe('finished');
  });

  it('an end by a worker another has taken the run from is fenced off', async () => {
    const { backend, lifecycle, events, take } = await setUp();
    const epoch = await take();
    await backend.ledger.take('r');
    expect((await lifecycle.finish(RUN, epoch, { status: 'completed', messages: [] })).status).toBe('fenced');
    expect(events()).toEqual([['run_queued', 1]]);
  });

  it('a database out of reach holds back neither the done nor the slot: the row waits in the durable writes', async () => {
    const kept: Array<() => Promise<void>> = [];
    const { lifecycle, events, status, slotHeld, take } = await setUp({ run: async (_name, write) => (kept.push(write), false) });
    const epoch = await take();
    await lifecycle.finish(RUN, epoch, { status: 'completed', messages: [] });
    expect(events()).toEqual([['run_queued', 1], ['done', 2]]);
    expect(slotHeld()).toBe(false);
    expect(await status()).toBe('running');
    await kept[0]!();
    expect(await status()).toBe('completed');
  });

  it('running → waiting → running: a park records the wait fenced by the epoch; an answer wakes the delayed job', async () => {
    const { backend, lifecycle, status, take } = await setUp();
    const epoch = await take();
    await expect(lifecycle.park(RUN, epoch + 1, WAIT, 1)).rejects.toThrow(RunFencedError);
    await lifecycle.park(RUN, epoch, WAIT, 1);
    expect(await status()).toBe('waiting');
    expect(await backend.ledger.parkedOf('r')).toEqual({ ...WAIT, seq: 1 });
    backend.jobStates.get('r')!.state = 'delayed';
    await backend.hitl.open({ requestId: 'q', runId: 'r', sessionId: 's', tenantId: 't', userId: 'u' });
    await lifecycle.parked(WAIT, 'r');
    expect(await backend.jobs.jobState('r')).toBe('delayed');
    await backend.hitl.decide('q', null, 'approve');
    await lifecycle.parked(WAIT, 'r');
    expect(await backend.jobs.jobState('r')).toBe('waiting');
    await take();
    expect(await status()).toBe('running');
  });

  it('waiting → cancelled: the open call ends cancelled before the done, and the question is closed', async () => {
    const { backend, lifecycle, events, status, slotHeld, take } = await setUp();
    const epoch = await take();
    await backend.hitl.open({ requestId: 'q', runId: 'r', sessionId: 's', tenantId: 't', userId: 'u' });
    await lifecycle.park(RUN, epoch, WAIT, 1);
    backend.jobStates.get('r')!.state = 'delayed';
    expect(await lifecycle.cancel(RUN)).toBe('ended_queued');
    expect(events()).toEqual([['run_queued', 1], ['tool_result', 2], ['done', 3]]);
    expect(backend.eventsOf('r')[1]).toMatchObject({ tool_call_id: 'c1', status: 'cancelled' });
    expect((await backend.hitl.get('q'))?.status).toBe('cancelled');
    expect(await status()).toBe('cancelled');
    expect(slotHeld()).toBe(false);
  });

  it('waiting → timeout: the expiry closes the question, ends the open call timeout, frees the slot before the done, and archives it, with no worker', async () => {
    const { backend, store, lifecycle, events, status, slotHeld, take } = await setUp();
    const epoch = await take();
    await backend.hitl.open({ requestId: 'q', runId: 'r', sessionId: 's', tenantId: 't', userId: 'u' });
    await lifecycle.park(RUN, epoch, WAIT, 1);
    backend.jobStates.get('r')!.state = 'delayed';
    const order: string[] = [];
    const append = backend.log.append.bind(backend.log);
    backend.log.append = async (event, ...rest) => (order.push(`${event.event_type}:slot=${slotHeld()}`), append(event, ...rest));
    expect(await lifecycle.expire(RUN)).toBe('ended');
    expect(events()).toEqual([['run_queued', 1], ['tool_result', 2], ['done', 3]]);
    expect(order).toEqual(['tool_result:slot=true', 'done:slot=false']);
    expect(backend.eventsOf('r')[1]).toMatchObject({ tool_call_id: 'c1', status: 'timeout' });
    expect(backend.eventsOf('r')[2]).toMatchObject({ cancelled: true, reason: 'timeout' });
    expect((await backend.hitl.get('q'))?.status).toBe('timeout');
    expect(await status()).toBe('timeout');
    expect((await store.events.list('r', 0)).length).toBe(3);
    expect(await backend.jobs.jobState('r')).toBe('unknown');
    // A second sweep of the same entry, or a cancel after it, changes nothing.
    expect(await lifecycle.expire(RUN)).toBe('not_parked');
    expect(await lifecycle.cancel(RUN)).toBe('finished');
    expect(events()).toHaveLength(3);
  });

  it('an answer that came in time wins over the expiry: the run stays parked for the worker that continues it', async () => {
    const { backend, lifecycle, events, status, slotHeld, take } = await setUp();
    const epoch = await take();
    await backend.hitl.open({ requestId: 'q', runId: 'r', sessionId: 's', tenantId: 't', userId: 'u' });
    await lifecycle.park(RUN, epoch, WAIT, 1);
    backend.jobStates.get('r')!.state = 'delayed';
    await backend.hitl.decide('q', { tenantId: 't', userId: 'u' }, 'approve');
    expect(await lifecycle.expire(RUN)).toBe('answered');
    expect(events()).toEqual([['run_queued', 1]]);
    expect(await status()).toBe('waiting');
    expect(slotHeld()).toBe(true);
  });

  it('an expiry that finds the job taken by a worker leaves the end to it: the question is closed timeout for it to read', async () => {
    const { backend, lifecycle, events, take } = await setUp();
    const epoch = await take();
    await backend.hitl.open({ requestId: 'q', runId: 'r', sessionId: 's', tenantId: 't', userId: 'u' });
    await lifecycle.park(RUN, epoch, WAIT, 1);
    expect(backend.jobStates.get('r')!.state).toBe('active');
    expect(await lifecycle.expire(RUN)).toBe('running');
    expect(events()).toEqual([['run_queued', 1]]);
    expect((await backend.hitl.get('q'))?.status).toBe('timeout');
  });

  it('→ lost: the reaper ends a run nobody holds with error{run_lost} and its done, archives it and frees its slot', async () => {
    const { store, backend, lifecycle, events, status, slotHeld } = await setUp();
    backend.jobStates.delete('r');
    expect(await lifecycle.reap((await store.runs.get('r'))!, 'unknown')).toBe(true);
    expect(events()).toEqual([['run_queued', 1], ['error', 2], ['done', 3]]);
    expect(backend.eventsOf('r')[1]).toMatchObject({ error_code: 'run_lost', recoverable: false });
    expect(await status()).toBe('lost');
    expect((await store.events.list('r', 0)).length).toBe(3);
    expect(slotHeld()).toBe(false);
  });

  it('a run whose done went out but whose row did not is given the status its log says', async () => {
    const { store, backend, lifecycle, status, take } = await setUp();
    const epoch = await take();
    await backend.log.append(new TextEvent({ sessionId: 's', runId: 'r' }, 'hi').toDict(), epoch);
    await backend.log.append(new DoneEvent({ sessionId: 's', runId: 'r' }, true, 'cancelled').toDict(), epoch);
    expect(await lifecycle.reap((await store.runs.get('r'))!, 'completed')).toBe(true);
    expect(await status()).toBe('cancelled');
  });

  it('refuses a move the machine does not have: a finished run is not reaped', async () => {
    const { store, lifecycle, take } = await setUp();
    const epoch = await take();
    await lifecycle.finish(RUN, epoch, { status: 'completed', messages: [] });
    await expect(lifecycle.reap((await store.runs.get('r'))!, 'completed')).rejects.toThrow(IllegalRunTransition);
  });
});
