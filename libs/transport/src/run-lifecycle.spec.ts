import type { EventDict } from '#core/events/execution-event.js';
import type { AppendResult, RunEventLog } from './run-event-log.js';
import { RunLifecycle } from './run-lifecycle.js';
import type { RunQueue } from './run-queue.js';

const RUN = { runId: 'r', sessionId: 's', tenantId: 't' };

/** A log and queue of plain fakes: what each step of a cancel finds is set per case. */
function fakes(found: { sealed: boolean; held: boolean; doneMeanwhile?: boolean }) {
  const appended: EventDict[] = [];
  const forgotten: string[] = [];
  const log = {
    requestCancel: async () => !found.sealed,
    forgetActive: async (_session: string, runId: string) => void forgotten.push(runId),
    append: async (event: EventDict): Promise<AppendResult> => {
      if (found.doneMeanwhile) return { status: 'sealed' };
      appended.push(event);
      return { status: 'appended', event: { ...event, seq: appended.length } };
    },
  } as unknown as RunEventLog;
  const queue = { removeWaiting: async () => !found.held } as unknown as RunQueue;
  const store = { runs: { markFinished: async () => true }, events: { appendBatch: async () => undefined } };
  return { lifecycle: new RunLifecycle({ log: Object.assign(log, { range: async () => appended }), queue, store: store as never }), appended, forgotten };
}

describe('RunLifecycle.cancel', () => {
  it('ends a run no worker holds with its done{cancelled}', async () => {
    const { lifecycle, appended } = fakes({ sealed: false, held: false });
    expect(await lifecycle.cancel(RUN)).toBe('ended_queued');
    expect(appended.map((e) => [e.event_type, e.cancelled])).toEqual([['done', true]]);
  });

  it('leaves a run a worker holds to that worker', async () => {
    const { lifecycle, appended } = fakes({ sealed: false, held: true });
    expect(await lifecycle.cancel(RUN)).toBe('running');
    expect(appended).toEqual([]);
  });

  it('reports a run that had its done already as finished, and takes it off the active runs', async () => {
    const { lifecycle, forgotten } = fakes({ sealed: true, held: false });
    expect(await lifecycle.cancel(RUN)).toBe('finished');
    expect(forgotten).toEqual(['r']);
  });

  it('reports a run whose own done landed between the cancel record and the removal as finished', async () => {
    expect(await fakes({ sealed: false, held: false, doneMeanwhile: true }).lifecycle.cancel(RUN)).toBe('finished');
  });
});
