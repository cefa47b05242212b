import { MoreThan, type DataSource, type Repository } from 'typeorm';
import { eventsJson } from '#core/events/event-json.js';
import type { EventDict } from '#core/events/execution-event.js';
import type { RunEventArchive } from '#core/session/session-store.js';
import { RunEventBatchEntity } from './entities/run-event-batch.entity.js';
import type { MysqlUsageStore } from './mysql-usage-store.js';
import { retryConflicts } from './retry-conflicts.js';

/** A duplicate (run_id, seq_from) (1062) means another writer's slice landed first: rerun the transaction, as for a deadlock. */
const DUPLICATE_KEY = 1062;

/**
 * The durable run log: one row per batch of events. A rewritten batch (a worker died and the run
 * was picked up again) only adds the events after the highest seq already stored. The batch's
 * `usage` events become usage facts in the same flush, and a run whose `done` it holds gets its
 * totals on its row.
 */
export class MysqlRunEventArchive implements RunEventArchive {
  private readonly repo: Repository<RunEventBatchEntity>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly now: () => Date,
    private readonly usage: MysqlUsageStore,
  ) {
    this.repo = dataSource.getRepository(RunEventBatchEntity);
  }

  async appendBatch(runId: string, events: EventDict[]): Promise<void> {
    if (events.length === 0) return;
    await retryConflicts(
      () =>
        this.dataSource.transaction(async (manager) => {
          // FOR UPDATE serialises writers of one run, so two retries cannot both insert a slice.
          const [row] = await manager.query('SELECT COALESCE(MAX(seq_to), 0) AS last FROM run_events WHERE run_id = ? FOR UPDATE', [runId]);
          const fresh = eventsAfter(events, Number(row.last));
          if (fresh.length === 0) return;
          await manager.insert(RunEventBatchEntity, {
            runId,
            sessionId: String(fresh[0].session_id ?? ''),
            seqFrom: fresh[0].seq,
            seqTo: fresh[fresh.length - 1].seq,
            events: eventsJson(fresh),
            createdAt: this.now(),
          });
        }),
      [DUPLICATE_KEY],
    );
    // Every usage event offered, not only the fresh ones: a write whose facts failed after its
    // events landed is offered again, and must not find nothing left to count.
    await this.usage.recordArchived([{ runId, events }]);
  }

  async appendMany(batches: Array<{ runId: string; events: EventDict[] }>): Promise<void> {
    const rows = batches
      .map((b) => ({ runId: b.runId, events: eventsAfter(b.events, 0) }))
      .filter((b) => b.events.length > 0)
      .map((b) => ({
        runId: b.runId,
        sessionId: String(b.events[0].session_id ?? ''),
        seqFrom: b.events[0].seq,
        seqTo: b.events[b.events.length - 1].seq,
        events: eventsJson(b.events),
        createdAt: this.now(),
      }));
    if (rows.length === 0) return;
    // One statement for every run of the flush. A batch that starts where a stored one starts
    // (a retry, or a worker continuing a run re-archiving its log from seq 1) keeps whichever
    // reaches further, so nothing newer is dropped; overlaps with other rows are read once.
    const [insert, parameters] = this.repo.createQueryBuilder().insert().into(RunEventBatchEntity).values(rows).getQueryAndParameters();
    // `events` first: it must compare against the stored seq_to before that is raised.
    const keepLonger = ' ON DUPLICATE KEY UPDATE events = IF(VALUES(seq_to) > seq_to, VALUES(events), events), seq_to = GREATEST(seq_to, VALUES(seq_to))';
    await retryConflicts(() => this.dataSource.query(insert + keepLonger, parameters));
    await this.usage.recordArchived(batches);
  }

  async list(runId: string, afterSeq: number): Promise<EventDict[]> {
    const batches = await this.repo.find({
      select: { events: true },
      where: { runId, seqTo: MoreThan(afterSeq) },
      order: { seqFrom: 'ASC' },
    });
    return eventsAfter(batches.flatMap((b) => JSON.parse(b.events) as EventDict[]), afterSeq);
  }
}

/** The events with seq above `last`, in seq order, each seq once. */
function eventsAfter(events: EventDict[], last: number): EventDict[] {
  const sorted = events.filter((e) => e.seq > last).sort((a, b) => a.seq - b.seq);
  return sorted.filter((e, i) => i === 0 || e.seq !== sorted[i - 1].seq);
}
