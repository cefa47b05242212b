import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { idColumn, timestampColumn } from './column-types.js';

/**
 * A contiguous slice of a run's events (never a row per token). The unique (run_id, seq_from)
 * key stops a retried batch from being stored twice.
 */
@Entity({ name: 'run_events' })
@Index('uq_run_events_run_seq', ['runId', 'seqFrom'], { unique: true })
@Index('idx_run_events_session', ['sessionId'])
export class RunEventBatchEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id: string;

  @Column(idColumn('run_id'))
  runId: string;

  @Column(idColumn('session_id'))
  sessionId: string;

  @Column({ name: 'seq_from', type: 'int', unsigned: true })
  seqFrom: number;

  @Column({ name: 'seq_to', type: 'int', unsigned: true })
  seqTo: number;

  /** JSON array of event dicts, in seq order. */
  @Column({ type: 'longtext' })
  events: string;

  @Column(timestampColumn('created_at'))
  createdAt: Date;
}
