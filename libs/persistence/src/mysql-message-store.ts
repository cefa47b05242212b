import { randomUUID } from 'node:crypto';
import type { DataSource, Repository } from 'typeorm';
import type { MessageRecord, MessageStore, NewMessage, Page } from '#core/session/session-store.js';
import type { JsonObject } from './entities/column-types.js';
import { MessageEntity } from './entities/message.entity.js';
import { toMessageRecord } from './record-mappers.js';

/** New messages as records, created at `at` unless they say. */
export function messageRecords(messages: NewMessage[], at: Date): MessageRecord[] {
  return messages.map((m) => ({
    messageId: m.messageId ?? randomUUID(),
    sessionId: m.sessionId,
    runId: m.runId ?? null,
    role: m.role,
    content: m.content,
    metadata: m.metadata ?? {},
    createdAt: m.createdAt ?? at,
  }));
}

/** The rows of message records, their metadata made storable. */
export function messageRows(records: MessageRecord[]): Array<MessageRecord & { metadata: JsonObject }> {
  return records.map((r) => ({ ...r, metadata: wellFormed(r.metadata) as JsonObject }));
}

/** A session's history in MySQL, read back in append order (the auto-increment id). */
export class MysqlMessageStore implements MessageStore {
  private readonly repo: Repository<MessageEntity>;

  constructor(
    dataSource: DataSource,
    private readonly now: () => Date,
  ) {
    this.repo = dataSource.getRepository(MessageEntity);
  }

  /** Appends in one INSERT, so the messages keep the given order and land all or none. */
  async append(messages: NewMessage[]): Promise<MessageRecord[]> {
    if (messages.length === 0) return [];
    const records = messageRecords(messages, this.now());
    await this.repo.insert(messageRows(records));
    return records;
  }

  async list(sessionId: string, page: Page): Promise<MessageRecord[]> {
    if (page.limit <= 0) return [];
    const rows = await this.repo.find({
      where: { sessionId },
      order: { id: 'ASC' },
      skip: Math.max(0, page.offset),
      take: page.limit,
    });
    return rows.map(toMessageRecord);
  }

  count(sessionId: string): Promise<number> {
    return this.repo.countBy({ sessionId });
  }
}

/**
 * The value with every string made well-formed UTF-16 (a lone surrogate becomes U+FFFD): the
 * JSON column refuses the `\ud800` escapes JSON.stringify writes for them, and a model may well
 * produce one inside tool arguments.
 */
function wellFormed(value: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? v.replace(LONE_SURROGATE, '\ufffd') : v)));
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
