import { randomUUID } from 'node:crypto';
import { And, In, LessThan, Raw, type DataSource, type FindOperator, type EntityManager, type FindOptionsWhere, type Repository } from 'typeorm';
import { ACTIVE_RUN_STATES } from '#core/run/run-state.js';
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
    ephemeral: input.ephemeral === true,
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
    patch: Partial<Pick<SessionRecord, 'title' | 'metadata' | 'lastActiveAt' | 'ephemeral'>>,
  ): Promise<SessionRecord | null> {
    const set: QueryDeepPartialEntity<SessionEntity> = { updatedAt: this.now() };
    if (patch.title !== undefined) set.title = patch.title;
    if (patch.metadata !== undefined) set.metadata = patch.metadata as JsonObject;
    if (patch.lastActiveAt !== undefined) set.lastActiveAt = patch.lastActiveAt;
    if (patch.ephemeral !== undefined) set.ephemeral = patch.ephemeral;
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

  async cleanupExpired(timeoutSeconds: number, ephemeralTimeoutSeconds?: number): Promise<ExpiredSessions> {
    const owners = new Map<string, { tenantId: string; userId: string }>();
    let removed = await this.removeExpired({ lastActiveAt: LessThan(new Date(this.now().getTime() - timeoutSeconds * 1000)) }, owners);
    if (ephemeralTimeoutSeconds !== undefined) {
      // A session whose run still goes on stays: deleting it would take the answer's rows with it.
      const idle = Raw((column) => `NOT EXISTS (SELECT 1 FROM runs r WHERE r.session_id = ${column} AND r.status IN (${ACTIVE_RUN_STATES.map((state) => `'${state}'`).join(', ')}))`);
      removed += await this.removeExpired({ ephemeral: true, lastActiveAt: LessThan(new Date(this.now().getTime() - ephemeralTimeoutSeconds * 1000)), sessionId: idle }, owners);
    }
    return { removed, owners: [...owners.values()] };
  }

  /** Deletes the sessions `where` finds, a chunk per transaction; each is found again under lock, so one touched meanwhile stays. */
  private async removeExpired(where: FindOptionsWhere<SessionEntity>, owners: Map<string, { tenantId: string; userId: string }>): Promise<number> {
    let removed = 0;
    for (;;) {
      const batch = await this.repo.find({ select: { sessionId: true }, where, take: CLEANUP_CHUNK });
      if (batch.length === 0) return removed;
      const ids = batch.map((s) => s.sessionId);
      removed += await this.dataSource.transaction(async (manager) => {
        const stillExpired = await manager.find(SessionEntity, {
          select: { sessionId: true, tenantId: true, userId: true },
          where: { ...where, sessionId: where.sessionId ? And(In(ids), where.sessionId as FindOperator<string>) : In(ids) },
          lock: { mode: 'pessimistic_write' },
        });
        const count = await deleteSessions(manager, stillExpired.map((s) => s.sessionId));
        for (const s of stillExpired) owners.set(JSON.stringify([s.tenantId, s.userId]), { tenantId: s.tenantId, userId: s.userId });
        return count;
      });
      if (batch.length < CLEANUP_CHUNK) return removed;
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
