import { In, type DataSource } from 'typeorm';
import type { NewSubmission, SubmissionStore } from '#core/session/session-store.js';
import { MessageEntity } from './entities/message.entity.js';
import { RunEntity } from './entities/run.entity.js';
import { SessionEntity } from './entities/session.entity.js';
import { messageRecords, messageRows } from './mysql-message-store.js';
import { queuedRun } from './mysql-run-store.js';
import { sessionRow } from './mysql-session-store.js';

/**
 * Chat turns' rows in MySQL, many turns per transaction: one multi-row INSERT per table and one
 * UPDATE for the sessions they continue, whatever the number of turns. A multi-row INSERT keeps
 * the given order, so each session's messages keep theirs.
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
    await this.dataSource.transaction(async (manager) => {
      // updateEntity(false): the rows are complete, nothing needs reading back after the INSERT.
      if (sessions.length > 0) await manager.createQueryBuilder().insert().into(SessionEntity).values(sessions).updateEntity(false).execute();
      await manager.createQueryBuilder().insert().into(RunEntity).values(runs).updateEntity(false).execute();
      if (messages.length > 0) await manager.createQueryBuilder().insert().into(MessageEntity).values(messages).updateEntity(false).execute();
      if (touched.length > 0) await manager.update(SessionEntity, { sessionId: In(touched) }, { lastActiveAt: at, updatedAt: at });
    });
  }
}
