import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { idColumn, primaryIdColumn, timestampColumn } from './column-types.js';

/** One MCP tool call (see ToolCallRecord). Index names match the migration. */
@Entity({ name: 'mcp_tool_call_log' })
@Index('idx_mcp_tool_call_log_tenant', ['tenantId', 'startedAt'])
@Index('idx_mcp_tool_call_log_session', ['sessionId', 'startedAt'])
export class ToolCallLogEntity {
  @PrimaryColumn(primaryIdColumn('call_id', 36))
  callId: string;

  @Column(idColumn('trace_id', 32))
  traceId: string;

  @Column(idColumn('tenant_id', 128))
  tenantId: string;

  @Column(idColumn('user_id', 128))
  userId: string;

  @Column(idColumn('session_id', 64))
  sessionId: string;

  @Column(idColumn('run_id', 64))
  runId: string;

  @Column(idColumn('agent_id', 128))
  agentId: string;

  @Column(idColumn('api_key_id', 128, true))
  apiKeyId: string | null;

  @Column(idColumn('server_id', 64))
  serverName: string;

  @Column(idColumn('tool_name', 200))
  toolName: string;

  @Column(idColumn('tool_call_id', 128))
  toolCallId: string;

  @Column(idColumn('schema_version', 32))
  schemaVersion: string;

  @Column({ type: 'varchar', length: 16 })
  validation: string;

  @Column({ type: 'varchar', length: 16 })
  status: string;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column(timestampColumn('started_at'))
  startedAt: Date;

  @Column(timestampColumn('ended_at'))
  endedAt: Date;

  @Column({ name: 'duration_ms', type: 'int', unsigned: true })
  durationMs: number;

  @Column({ name: 'args_bytes', type: 'int', unsigned: true })
  argsBytes: number;

  @Column({ name: 'args_sha256', type: 'char', length: 64 })
  argsSha256: string;

  @Column({ name: 'result_bytes', type: 'int', unsigned: true })
  resultBytes: number;

  @Column({ name: 'result_sha256', type: 'char', length: 64 })
  resultSha256: string;

  @Column({ name: 'args', type: 'json', nullable: true })
  args: unknown;

  @Column({ name: 'result', type: 'json', nullable: true })
  result: unknown;
}
