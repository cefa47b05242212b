import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { idColumn, timestampColumn } from './column-types.js';

/**
 * One long-term note of a user for an assistant. `id` is the adding order: it breaks ties
 * between notes of one millisecond. Index names match the migration.
 */
@Entity({ name: 'memories' })
@Index('idx_memories_owner', ['tenantId', 'userId', 'assistantId', 'createdAt'])
export class MemoryNoteEntity {
  /** BIGINT: mysql2 returns it as a string. */
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id: string;

  @Column(idColumn('tenant_id', 128))
  tenantId: string;

  @Column(idColumn('user_id', 128))
  userId: string;

  @Column(idColumn('assistant_id', 128))
  assistantId: string;

  @Column({ name: 'note', type: 'text' })
  text: string;

  @Column(timestampColumn('created_at'))
  createdAt: Date;
}
