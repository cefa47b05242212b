import { In, type DataSource } from 'typeorm';
import type { NewSubmission, RunFinish, SubmissionStore } from '#core/session/session-store.js';
import { MessageEntity } from './entities/message.entity.js';
import { RunEntity } from './entities/run.entity.js';
import { SessionEntity } from './entities/session.entity.js';
import { messageRecords, messageRows } from './mysql-message-store.js';
import { fromStates } from '#core/run/run-state.js';
import { queuedRun } from './mysql-run-store.js';
import { retryConflicts } from './retry-conflicts.js';
import { sessionRow } from './mysql-session-store.js';

/**
 * Chat turns' rows in MySQL, many turns per transaction: one multi-row INSERT per table and one
 * UPDATE for the sessions they continue, whatever the number of turns. A multi-row INSERT keeps
 * the given order, so each session's messages keep theirs. Runs starting and ending are written
 * the same way, many per statement. These batches and the workers' lock rows of many runs in
 * orders that can cross: a transaction InnoDB picks as a deadlock victim is run again.
 */
export class MysqlSubmissionStore implements SubmissionStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly now: () => Date,
  ) {}

  async writeMany(submissions: NewSubmission[]): Promise<void> {
    if (submissions.length === 0) return;
    const at = this.now();
    const sessions = submissions.flatMap((s) => (s.session ? [sessionRow(s.session, at)] : []));
    const touched = [...new Set(submissions.flatMap((s) => (s.touchSessionId ? [s.touchSessionId] : [])))];
    const runs = submissions.map((s) => ({ ...queuedRun(s.run, at) }));
    const messages = messageRows(messageRecords(submissions.flatMap((s) => s.messages), at));
    await retryConflicts(() => this.dataSource.transaction(async (manager) => {
      // updateEntity(false): the rows are complete, nothing needs reading back after the INSERT.
      if (sessions.length > 0) await manager.createQueryBuilder().insert().into(SessionEntity).values(sessions).updateEntity(false).execute();
      await manager.createQueryBuilder().insert().into(RunEntity).values(runs).updateEntity(false).execute();
      if (messages.length > 0) await manager.createQueryBuilder().insert().into(MessageEntity).values(messages).updateEntity(false).execute();
      if (touched.length > 0) await manager.update(SessionEntity, { sessionId: In(touched) }, { lastActiveAt: at, updatedAt: at });
    }));
  }

  async startMany(runIds: readonly string[]): Promise<void> {
    if (runIds.length === 0) return;
    const at = this.now();
    await retryConflicts(() =>
      this.dataSource
        .createQueryBuilder()
        .update(RunEntity)
        .set({ status: 'running', startedAt: () => 'COALESCE(started_at, :startedAt)' })
        .setParameter('startedAt', at)
        .where('run_id IN (:...runIds)', { runIds: [...runIds] })
        .andWhere('status IN (:...from)', { from: fromStates('running') })
        .execute(),
    );
  }

  async finishMany(finishes: readonly RunFinish[]): Promise<void> {
    if (finishes.length === 0) return;
    const at = this.now();
    const messages = messageRows(messageRecords(finishes.flatMap((f) => f.messages), at));
    // One UPDATE per distinct (status, error): usually one or two.
    const byOutcome = new Map<string, { status: RunFinish['status']; error: string | null; runIds: string[] }>();
    for (const f of finishes) {
      const key = JSON.stringify([f.status, f.error ?? null]);
      const group = byOutcome.get(key) ?? { status: f.status, error: f.error ?? null, runIds: [] };
      group.runIds.push(f.runId);
      byOutcome.set(key, group);
    }
    const sessions = [...new Set(finishes.map((f) => f.sessionId))];
    await retryConflicts(() => this.dataSource.transaction(async (manager) => {
      if (messages.length > 0) await manager.createQueryBuilder().insert().into(MessageEntity).values(messages).updateEntity(false).execute();
      for (const { status, error, runIds } of byOutcome.values()) {
        await manager
          .createQueryBuilder()
          .update(RunEntity)
          .set({ status, error, finishedAt: at })
          .where('run_id IN (:...runIds)', { runIds })
          .andWhere('status IN (:...from)', { from: fromStates(status) })
          .execute();
      }
      await manager.update(SessionEntity, { sessionId: In(sessions) }, { lastActiveAt: at, updatedAt: at });
    }));
  }
}
