import type { MessageRecord, RunRecord, SessionRecord } from '#core/session/session-store.js';
import type { MessageEntity } from './entities/message.entity.js';
import type { RunEntity } from './entities/run.entity.js';
import type { SessionEntity } from './entities/session.entity.js';

/** Plain records out of entity rows, so callers never hold TypeORM instances. */
export function toSessionRecord(row: SessionEntity): SessionRecord {
  return {
    sessionId: row.sessionId,
    tenantId: row.tenantId,
    userId: row.userId,
    assistantId: row.assistantId,
    title: row.title,
    metadata: row.metadata ?? {},
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    lastActiveAt: row.lastActiveAt,
    ...(row.ephemeral ? { ephemeral: true } : {}),
  };
}

export function toMessageRecord(row: Omit<MessageEntity, 'id'>): MessageRecord {
  return {
    messageId: row.messageId,
    sessionId: row.sessionId,
    runId: row.runId ?? null,
    role: row.role,
    content: row.content,
    metadata: row.metadata ?? {},
    createdAt: row.createdAt,
  };
}

export function toRunRecord(row: Omit<RunEntity, 'id'>): RunRecord {
  return {
    runId: row.runId,
    sessionId: row.sessionId,
    tenantId: row.tenantId,
    userId: row.userId,
    assistantId: row.assistantId,
    status: row.status,
    error: row.error ?? null,
    createdAt: row.createdAt,
    startedAt: row.startedAt ?? null,
    finishedAt: row.finishedAt ?? null,
  };
}
