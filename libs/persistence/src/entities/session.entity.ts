import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { idColumn, primaryIdColumn, timestampColumn, type JsonObject } from './column-types.js';

/** A person's conversation with an assistant. Index names match the initial migration. */
@Entity({ name: 'sessions' })
@Index('idx_sessions_user_activity', ['tenantId', 'userId', 'lastActiveAt'])
@Index('idx_sessions_assistant_activity', ['tenantId', 'assistantId', 'lastActiveAt'])
@Index('idx_sessions_last_active', ['lastActiveAt'])
@Index('idx_sessions_ephemeral_activity', ['ephemeral', 'lastActiveAt'])
export class SessionEntity {
  @PrimaryColumn(primaryIdColumn('session_id'))
  sessionId: string;

  @Column(idColumn('tenant_id', 128))
  tenantId: string;

  @Column(idColumn('user_id', 128))
  userId: string;

  @Column(idColumn('assistant_id', 128))
  assistantId: string;

  @Column({ type: 'varchar', length: 512, default: '' })
  title: string;

  @Column({ type: 'json' })
  metadata: JsonObject;

  @Column(timestampColumn('created_at'))
  createdAt: Date;

  @Column(timestampColumn('updated_at'))
  updatedAt: Date;

  @Column(timestampColumn('last_active_at'))
  lastActiveAt: Date;

  /** Goes soon after its last activity (a stateless OpenAI-compatible call's), unless a client continues it. */
  @Column({ name: 'ephemeral', type: 'boolean', default: false })
  ephemeral: boolean;
}
