import { MemoryConversationStore } from '../session/memory-conversation-store.js';
import { MemoryRunBackend, WRITE_NOW } from './memory/memory-run-backend.js';
import { WorkerRunLifecycle } from './run-lifecycle.js';
import { canMove, IllegalRunTransition, type RunState } from './run-state.js';

/**
 * Every public lifecycle method that moves a run's row, from a row in each of the eight states:
 * the row changes only along an edge of the state table (run-state.ts), and a move the table
 * does not have is refused: the row stays as it was, or (where the lifecycle knows the state it
 * moves from) the call throws IllegalRunTransition before anything is written.
 */

const STATES: RunState[] = ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled', 'lost', 'timeout'];
const RUN = { runId: 'r', sessionId: 's', tenantId: 't' };
const WAIT = { requestId: 'q', toolCallId: 'c1', until: Date.now() + 60_000 };
const SILENT = { warn: () => undefined, error: () => undefined };

/** A lifecycle over memory, with run r's row in `state`, reached along the table's edges. */
async function rowIn(state: RunState) {
  const backend = new MemoryRunBackend();
  const store = new MemoryConversationStore();
  await store.sessions.create({ sessionId: 's', tenantId: 't', userId: 'u', assistantId: 'a', title: 'x' });
  await store.runs.create({ runId: 'r', sessionId: 's', tenantId: 't', userId: 'u', assistantId: 'a' });
  if (state !== 'queued' && !canMove('queued', state)) await store.runs.markStarted('r');
  if (state === 'running' || state === 'waiting') await store.runs.markStarted('r');
  if (state === 'waiting') await store.runs.markWaiting('r');
  if (state !== 'queued' && state !== 'running' && state !== 'waiting') await store.runs.markFinished('r', state);
  expect((await store.runs.get('r'))?.status).toBe(state);
  const lifecycle = new WorkerRunLifecycle({ ...backend, rows: store, durable: WRITE_NOW, databaseUnavailable: () => false, logger: SILENT });
  return { backend, store, lifecycle, status: async () => (await store.runs.get('r'))?.status };
}

/** A method, what it needs set up in Redis (memory), and the state it moves the row to. */
interface Move {
  name: string;
  to: RunState;
  /** The states it may move from: the lifecycle's own (narrower than the table's where it knows more). */
  from: RunState[];
  call: (setup: Awaited<ReturnType<typeof rowIn>>) => Promise<unknown>;
}

const MOVES: Move[] = [
  { name: 'start', to: 'running', from: ['queued', 'waiting'], call: ({ lifecycle }) => lifecycle.start({ runId: 'r', tenantId: 't' }) },
  {
    name: 'park',
    to: 'waiting',
    from: ['running'],
    call: async ({ backend, lifecycle }) => {
      const taken = await backend.ledger.take('r');
      await lifecycle.park(RUN, taken.sealed ? 0 : taken.epoch, WAIT, 1);
    },
  },
  { name: 'abandon', to: 'failed', from: ['queued'], call: ({ lifecycle }) => lifecycle.abandon(RUN, true) },
  {
    name: 'cancel (queued, no worker)',
    to: 'cancelled',
    from: ['queued'],
    call: async ({ backend, lifecycle }) => {
      await backend.jobs.enqueue({ ...RUN, userId: 'u', assistantId: 'a', message: 'hi', enqueuedAt: 0 });
      await lifecycle.cancel(RUN);
    },
  },
  {
    name: 'cancel (parked)',
    to: 'cancelled',
    from: ['running', 'waiting'],
    call: async ({ backend, lifecycle }) => {
      const taken = await backend.ledger.take('r');
      await backend.ledger.park('r', taken.sealed ? 0 : taken.epoch, { ...WAIT, seq: 0 });
      await lifecycle.cancel(RUN);
    },
  },
  {
    name: 'expire',
    to: 'timeout',
    from: ['running', 'waiting'],
    call: async ({ backend, lifecycle }) => {
      const taken = await backend.ledger.take('r');
      await backend.ledger.park('r', taken.sealed ? 0 : taken.epoch, { ...WAIT, seq: 0 });
      await backend.hitl.open({ requestId: 'q', runId: 'r', sessionId: 's', tenantId: 't', userId: 'u' });
      await lifecycle.expire(RUN);
    },
  },
  {
    name: 'finish (completed)',
    to: 'completed',
    from: ['running'],
    call: async ({ backend, lifecycle }) => {
      const taken = await backend.ledger.take('r');
      await lifecycle.finish(RUN, taken.sealed ? 0 : taken.epoch, { status: 'completed', messages: [] });
    },
  },
];

describe("every lifecycle move goes through the run's state table", () => {
  for (const move of MOVES) {
    describe(move.name, () => {
      it.each(STATES)(`from %s: moves to ${move.to} only along an edge of the table`, async (state) => {
        const setup = await rowIn(state);
        await move.call(setup);
        const legal = move.from.includes(state);
        // What the lifecycle may do is a subset of the table: no edge of its own.
        if (legal) expect(canMove(state, move.to)).toBe(true);
        expect(await setup.status()).toBe(legal ? move.to : state);
      });
    });
  }

  describe('reap (the row says where it is)', () => {
    it.each(STATES)('from %s: an active row ends lost; a final one is an illegal move and throws', async (state) => {
      const { lifecycle, store, status } = await rowIn(state);
      const row = (await store.runs.get('r'))!;
      if (canMove(state, 'lost')) {
        expect(await lifecycle.reap(row, 'unknown')).toBe(true);
        expect(await status()).toBe('lost');
      } else {
        await expect(lifecycle.reap(row, 'unknown')).rejects.toBeInstanceOf(IllegalRunTransition);
        expect(await status()).toBe(state);
      }
    });

    it('a sealed run whose start never reached its row moves through running to its end', async () => {
      const { backend, lifecycle, store, status } = await rowIn('queued');
      await backend.log.append({ event_type: 'done', timestamp: '', session_id: 's', run_id: 'r', seq: 0, cancelled: false });
      expect(await lifecycle.reap((await store.runs.get('r'))!, 'completed')).toBe(true);
      expect(await status()).toBe('completed');
    });
  });
});
