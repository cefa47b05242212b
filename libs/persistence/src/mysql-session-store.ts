import { randomUUID } from 'node:crypto';
import { In, LessThan, type DataSource, type EntityManager, type Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import type { ExpiredSessions, NewSession, Page, SessionRecord, SessionStore } from '#core/session/session-store.js';
import type { JsonObject } from './entities/column-types.js';
import { MessageEntity } from './entities/message.entity.js';
import { RunEventBatchEntity } from './entities/run-event-batch.entity.js';
import { RunEntity } from './entities/run.entity.js';
import { SessionEntity } from './entities/session.entity.js';
import { toSessionRecord } from './record-mappers.js';

/** Sessions expired per cleanup transaction, to keep locks short. */
const CLEANUP_CHUNK = 200;

/** A new session's row, created at `at`. */
export function sessionRow(input: NewSession, at: Date): SessionEntity {
  return {
    sessionId: input.sessionId ?? randomUUID(),
    tenantId: input.tenantId,
    userId: input.userId,
    assistantId: input.assistantId,
    title: input.title ?? '',
    metadata: (input.metadata ?? {}) as JsonObject,
    createdAt: at,
    updatedAt: at,
    lastActiveAt: at,
  };
}

/** Sessions in MySQL; deleting one deletes its messages, runs and run events in one transaction. */
export class MysqlSessionStore implements SessionStore {
  private readonly repo: Repository<SessionEntity>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly now: () => Date,
  ) {
    this.repo = dataSource.getRepository(SessionEntity);
  }

  async create(input: NewSession): Promise<SessionRecord> {
    const row = sessionRow(input, this.now());
    await this.repo.insert(row);
    return toSessionRecord(row);
  }

  async get(sessionId: string): Promise<SessionRecord | null> {
    const row = await this.repo.findOneBy({ sessionId });
    return row ? toSessionRecord(row) : null;
  }

  async update(
    sessionId: string,
    patch: Partial<Pick<SessionRecord, 'title' | 'metadata' | 'lastActiveAt'>>,
  ): Promise<SessionRecord | null> {
    const set: QueryDeepPartialEntity<SessionEntity> = { updatedAt: this.now() };
    if (patch.title !== undefined) set.title = patch.title;
    if (patch.metadata !== undefined) set.metadata = patch.metadata as JsonObject;
    if (patch.lastActiveAt !== undefined) set.lastActiveAt = patch.lastActiveAt;
    const result = await this.repo.update({ sessionId }, set);
    return result.affected ? this.get(sessionId) : null;
  }

  async delete(sessionId: string): Promise<boolean> {
    const removed = await this.dataSource.transaction((manager) => deleteSessions(manager, [sessionId]));
    return removed > 0;
  }

  listByUser(tenantId: string, userId: string, page: Page): Promise<SessionRecord[]> {
    return this.list({ tenantId, userId }, page);
  }

  listByAssistant(tenantId: string, assistantId: string, page: Page): Promise<SessionRecord[]> {
    return this.list({ tenantId, assistantId }, page);
  }

  async cleanupExpired(timeoutSeconds: number): Promise<ExpiredSessions> {
    const cutoff = new Date(this.now().getTime() - timeoutSeconds * 1000);
    let removed = 0;
    const owners = new Map<string, { tenantId: string; userId: string }>();
    const result = () => ({ removed, owners: [...owners.values()] });
    for (;;) {
      const batch = await this.repo.find({
        select: { sessionId: true },
        where: { lastActiveAt: LessThan(cutoff) },
        take: CLEANUP_CHUNK,
      });
      if (batch.length === 0) return result();
      const ids = batch.map((s) => s.sessionId);
      removed += await this.dataSource.transaction(async (manager) => {
        // Re-check under lock: a session touched since the select above stays.
        const stillExpired = await manager.find(SessionEntity, {
          select: { sessionId: true, tenantId: true, userId: true },
          where: { sessionId: In(ids), lastActiveAt: LessThan(cutoff) },
          lock: { mode: 'pessimistic_write' },
        });
        const count = await deleteSessions(manager, stillExpired.map((s) => s.sessionId));
        for (const s of stillExpired) owners.set(JSON.stringify([s.tenantId, s.userId]), { tenantId: s.tenantId, userId: s.userId });
        return count;
      });
      if (batch.length < CLEANUP_CHUNK) return result();
    }
  }

  private async list(where: Partial<Pick<SessionEntity, 'tenantId' | 'userId' | 'assistantId'>>, page: Page): Promise<SessionRecord[]> {
    if (page.limit <= 0) return [];
    const rows = await this.repo.find({
      where,
      order: { lastActiveAt: 'DESC', sessionId: 'ASC' },
      skip: Math.max(0, page.offset),
      take: page.limit,
    });
    return rows.map(toSessionRecord);
  }
}

/** Deletes sessions with everything that belongs to them; returns how many sessions went. */
async function deleteSessions(manager: EntityManager, sessionIds: string[]): Promise<number> {
  if (sessionIds.length === 0) return 0;
  const placeholders = sessionIds.map(() => '?').join(', ');
  // Events are found through their session and through the session's runs.
  await manager.delete(RunEventBatchEntity, { sessionId: In(sessionIds) });
  await manager.query(
    `DELETE e FROM run_events e JOIN runs r ON r.run_id = e.run_id WHERE r.session_id IN (${placeholders})`,
    sessionIds,
  );
  await manager.delete(MessageEntity, { sessionId: In(sessionIds) });
  await manager.delete(RunEntity, { sessionId: In(sessionIds) });
  const result = await manager.delete(SessionEntity, { sessionId: In(sessionIds) });
  return result.affected ?? 0;
}
