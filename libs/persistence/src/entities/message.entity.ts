import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { ChatRole } from '#core/llm/chat-model.js';
import { idColumn, timestampColumn, type JsonObject } from './column-types.js';

/**
 * One message of a session's history. `id` is the append order: history is read by
 * (session_id, id), which stays exact for messages written in the same millisecond and is
 * immune to clock skew between the gateway and workers.
 */
@Entity({ name: 'messages' })
@Index('uq_messages_message_id', ['messageId'], { unique: true })
@Index('idx_messages_session_order', ['sessionId', 'id'])
export class MessageEntity {
  /** BIGINT: mysql2 returns it as a string. */
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id: string;

  @Column(idColumn('message_id'))
  messageId: string;

  @Column(idColumn('session_id'))
  sessionId: string;

  @Column(idColumn('run_id', 64, true))
  runId: string | null;

  @Column({ type: 'varchar', length: 16 })
  role: ChatRole;

  @Column({ type: 'longtext' })
  content: string;

  @Column({ type: 'json' })
  metadata: JsonObject;

  @Column(timestampColumn('created_at'))
  createdAt: Date;
}
