import { TextEvent } from '#core/events/execution-event.js';
import { MemoryRunBackend, WRITE_NOW } from '#core/run/memory/memory-run-backend.js';
import { WorkerRunLifecycle } from '#core/run/run-lifecycle.js';
import type { RunJobData } from '#core/run/run-ports.js';
import { MemoryConversationStore } from '#core/session/memory-conversation-store.js';
import type { EventArchiver } from './event-archiver.js';
import { RunAttempt } from './run-attempt.js';

const JOB: RunJobData = { runId: 'r', sessionId: 's', tenantId: 't', userId: 'u', assistantId: 'a', message: 'hi', enqueuedAt: 0 };
const SILENT = { warn: () => undefined, error: () => undefined };

/** An attempt over memory, its run's tenant slot taken as the gateway takes it. */
async function attempt() {
  const backend = new MemoryRunBackend();
  const store = new MemoryConversationStore();
  await store.sessions.create({ sessionId: 's', tenantId: 't', userId: 'u', assistantId: 'a', title: 'x' });
  await store.runs.create({ runId: 'r', sessionId: 's', tenantId: 't', userId: 'u', assistantId: 'a' });
  backend.takeSlot('t', 'r');
  const lifecycle = new WorkerRunLifecycle({ ...backend, rows: store, durable: WRITE_NOW, databaseUnavailable: () => false, logger: SILENT });
  const archiver: Pick<EventArchiver, 'add'> = { add: () => undefined };
  const run = new RunAttempt(JOB, { log: backend.log, ledger: backend.ledger, lifecycle, archiver });
  const slotHeld = () => backend.slotsHeld.get('t')?.has('r') === true;
  const done = () => backend.log.append({ event_type: 'done', timestamp: '', session_id: 's', run_id: 'r', seq: 0, cancelled: false });
  return { run, slotHeld, done };
}

describe('RunAttempt: how its run stands, as one state', () => {
  it('open, then ended here: over, not ended elsewhere, and its slot went with its end', async () => {
    const { run, slotHeld } = await attempt();
    await run.take();
    expect([run.isOver, run.endedElsewhere, run.foundSealed]).toEqual([false, false, false]);
    await run.end('completed');
    expect([run.isOver, run.endedElsewhere, run.foundSealed]).toEqual([true, false, false]);
    expect(slotHeld()).toBe(false);
  });

  it('ended before the take: over and ended elsewhere; letting go gives the slot back', async () => {
    const { run, slotHeld, done } = await attempt();
    await done();
    expect((await run.take()).sealed).toBe(true);
    expect([run.isOver, run.endedElsewhere, run.foundSealed]).toEqual([true, true, false]);
    await run.letGo();
    expect(slotHeld()).toBe(false);
  });

  it('ended while it ran: a refused write says so, an end afterwards keeps it so, and letting go gives the slot back', async () => {
    const { run, slotHeld, done } = await attempt();
    await run.take();
    await done();
    expect(await run.publish(new TextEvent(run.envelope, 'late'))).toBeNull();
    expect([run.isOver, run.endedElsewhere, run.foundSealed]).toEqual([true, true, true]);
    await run.end('cancelled');
    expect(run.endedElsewhere).toBe(true);
    await run.letGo();
    expect(slotHeld()).toBe(false);
  });
});
