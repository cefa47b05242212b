import { In, LessThan, type DataSource, type Repository } from 'typeorm';
import { ACTIVE_RUN_STATES, fromStates, type FinalRunState, type RunState } from '#core/run/run-state.js';
import type { RunRecord, RunStatus, RunStore } from '#core/session/session-store.js';
import { MessageEntity } from './entities/message.entity.js';
import { RunEventBatchEntity } from './entities/run-event-batch.entity.js';
import { RunEntity } from './entities/run.entity.js';
import { toRunRecord } from './record-mappers.js';

export const ACTIVE: RunStatus[] = [...ACTIVE_RUN_STATES];

/** A run as it is created: queued at `at`. */
export function queuedRun(run: Pick<RunRecord, 'runId' | 'sessionId' | 'tenantId' | 'userId' | 'assistantId'>, at: Date): RunRecord {
  return { ...run, status: 'queued', error: null, createdAt: at, startedAt: null, finishedAt: null };
}

/** Runs in MySQL. Status changes are compare-and-set, so a finished run never changes again. */
export class MysqlRunStore implements RunStore {
  private readonly repo: Repository<RunEntity>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly now: () => Date,
  ) {
    this.repo = dataSource.getRepository(RunEntity);
  }

  async create(run: Pick<RunRecord, 'runId' | 'sessionId' | 'tenantId' | 'userId' | 'assistantId'>): Promise<RunRecord> {
    const record = queuedRun(run, this.now());
    await this.repo.insert({ ...record });
    return record;
  }

  async get(runId: string): Promise<RunRecord | null> {
    const row = await this.repo.findOneBy({ runId });
    return row ? toRunRecord(row) : null;
  }

  /** Marks a queued or waiting run running; keeps the first start time when a run starts again. */
  async markStarted(runId: string): Promise<void> {
    await this.repo
      .createQueryBuilder()
      .update(RunEntity)
      .set({ status: 'running', startedAt: () => 'COALESCE(started_at, :startedAt)' })
      .setParameter('startedAt', this.now())
      .where('run_id = :runId', { runId })
      .andWhere('status IN (:...from)', { from: fromStates('running') })
      .execute();
  }

  async markWaiting(runId: string): Promise<boolean> {
    const result = await this.repo.createQueryBuilder().update(RunEntity).set({ status: 'waiting' }).where('run_id = :runId', { runId }).andWhere('status IN (:...from)', { from: fromStates('waiting') }).execute();
    return (result.affected ?? 0) > 0;
  }

  async markFinished(runId: string, status: FinalRunState, error?: string, from: readonly RunState[] = fromStates(status)): Promise<boolean> {
    const result = await this.repo
      .createQueryBuilder()
      .update(RunEntity)
      .set({ status, error: error ?? null, finishedAt: this.now() })
      .where('run_id = :runId', { runId })
      .andWhere('status IN (:...from)', { from: [...from] })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  async listActive(sessionId: string): Promise<RunRecord[]> {
    const rows = await this.repo.find({ where: { sessionId, status: In(ACTIVE) }, order: { id: 'ASC' } });
    return rows.map(toRunRecord);
  }

  async activeAmong(runIds: readonly string[]): Promise<Set<string>> {
    if (runIds.length === 0) return new Set();
    const rows = await this.repo.find({ select: { runId: true }, where: { runId: In([...runIds]), status: In(ACTIVE) } });
    return new Set(rows.map((r) => r.runId));
  }

  async listStale(before: Date, limit: number): Promise<RunRecord[]> {
    const rows = await this.repo.find({ where: { status: In(ACTIVE), createdAt: LessThan(before) }, order: { id: 'ASC' }, take: limit });
    return rows.map(toRunRecord);
  }

  async purgeIfOrphaned(runId: string, sessionId: string): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      // A shared lock on the session row (or its gap): a concurrent create or delete waits for us.
      const found = await manager.query('SELECT 1 AS found FROM sessions WHERE session_id = ? LOCK IN SHARE MODE', [sessionId]);
      if (found.length > 0) return false;
      await manager.delete(RunEventBatchEntity, { runId });
      await manager.delete(MessageEntity, { runId });
      await manager.delete(RunEntity, { runId });
      return true;
    });
  }
}
