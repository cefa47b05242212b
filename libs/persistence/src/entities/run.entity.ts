import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { RunStatus } from '#core/session/session-store.js';
import { idColumn, timestampColumn } from './column-types.js';

/** One agent run of a session; `id` orders runs created in the same millisecond. */
@Entity({ name: 'runs' })
@Index('uq_runs_run_id', ['runId'], { unique: true })
@Index('idx_runs_session_status', ['sessionId', 'status'])
@Index('idx_runs_tenant_status', ['tenantId', 'status'])
export class RunEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id: string;

  @Column(idColumn('run_id'))
  runId: string;

  @Column(idColumn('session_id'))
  sessionId: string;

  @Column(idColumn('tenant_id', 128))
  tenantId: string;

  @Column(idColumn('user_id', 128))
  userId: string;

  @Column(idColumn('assistant_id', 128))
  assistantId: string;

  @Column({ type: 'varchar', length: 16 })
  status: RunStatus;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column(timestampColumn('created_at'))
  createdAt: Date;

  @Column(timestampColumn('started_at', true))
  startedAt: Date | null;

  @Column(timestampColumn('finished_at', true))
  finishedAt: Date | null;

  /** The sums of the run's usage facts, set as its log's end is archived; null before (or for a run older than metering). */
  @Column({ name: 'input_tokens', type: 'bigint', unsigned: true, nullable: true })
  inputTokens: string | null;

  @Column({ name: 'output_tokens', type: 'bigint', unsigned: true, nullable: true })
  outputTokens: string | null;

  /** Exact, in the price table's currency. */
  @Column({ type: 'decimal', precision: 30, scale: 12, nullable: true })
  cost: string | null;
}
