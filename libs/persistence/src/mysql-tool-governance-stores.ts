import { randomUUID } from 'node:crypto';
import type { DataSource, FindOptionsWhere } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import type { NewToolBinding, ToolBinding, ToolBindingStore } from '#core/mcp/tool-bindings.js';
import type { ToolCallAuditStore, ToolCallQuery, ToolCallRecord, ToolCallStatus } from '#core/mcp/tool-call-audit.js';
import { ToolBindingEntity } from './entities/tool-binding.entity.js';
import { ToolCallLogEntity } from './entities/tool-call-log.entity.js';

/** Tool bindings in `mcp_tool_bindings`. */
export class MysqlToolBindingStore implements ToolBindingStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly now: () => Date,
  ) {}

  async list(tenantId: string): Promise<ToolBinding[]> {
    const rows = await this.dataSource.getRepository(ToolBindingEntity).find({ where: { tenantId }, order: { createdAt: 'ASC', bindingId: 'ASC' } });
    return rows.map((row) => ({
      bindingId: row.bindingId,
      tenantId: row.tenantId,
      ...(row.agentId !== null ? { agentId: row.agentId } : {}),
      ...(row.apiKeyId !== null ? { apiKeyId: row.apiKeyId } : {}),
      tools: row.tools,
      createdAt: row.createdAt,
    }));
  }

  async create(binding: NewToolBinding): Promise<ToolBinding> {
    const created: ToolBinding = { ...binding, bindingId: randomUUID(), createdAt: this.now() };
    await this.dataSource.getRepository(ToolBindingEntity).insert({
      bindingId: created.bindingId,
      tenantId: created.tenantId,
      agentId: created.agentId ?? null,
      apiKeyId: created.apiKeyId ?? null,
      tools: created.tools,
      createdAt: created.createdAt,
    });
    return created;
  }

  async delete(tenantId: string, bindingId: string): Promise<boolean> {
    const result = await this.dataSource.getRepository(ToolBindingEntity).delete({ tenantId, bindingId });
    return (result.affected ?? 0) > 0;
  }
}

/** The MCP call audit in `mcp_tool_call_log`: one multi-row INSERT IGNORE per batch. */
export class MysqlToolCallAuditStore implements ToolCallAuditStore {
  constructor(private readonly dataSource: DataSource) {}

  async append(records: readonly ToolCallRecord[]): Promise<void> {
    if (records.length === 0) return;
    // `args` and `result` are any JSON, which TypeORM's insert type cannot express.
    const rows = records.map((r) => ({
      ...r,
      apiKeyId: r.apiKeyId ?? null,
      error: r.error ?? null,
      args: r.args === undefined ? null : r.args,
      result: r.result === undefined ? null : r.result,
    })) as QueryDeepPartialEntity<ToolCallLogEntity>[];
    await this.dataSource.createQueryBuilder().insert().into(ToolCallLogEntity).values(rows).orIgnore().execute();
  }

  async list(tenantId: string, query: ToolCallQuery): Promise<ToolCallRecord[]> {
    const where: FindOptionsWhere<ToolCallLogEntity> = { tenantId };
    if (query.sessionId) where.sessionId = query.sessionId;
    if (query.toolName) where.toolName = query.toolName;
    if (query.status) where.status = query.status;
    const rows = await this.dataSource.getRepository(ToolCallLogEntity).find({ where, order: { startedAt: 'DESC', callId: 'ASC' }, take: query.limit, skip: query.offset });
    return rows.map((row) => ({
      callId: row.callId,
      traceId: row.traceId,
      tenantId: row.tenantId,
      userId: row.userId,
      sessionId: row.sessionId,
      runId: row.runId,
      agentId: row.agentId,
      ...(row.apiKeyId !== null ? { apiKeyId: row.apiKeyId } : {}),
      serverName: row.serverName,
      toolName: row.toolName,
      toolCallId: row.toolCallId,
      schemaVersion: row.schemaVersion,
      validation: row.validation as ToolCallRecord['validation'],
      status: row.status as ToolCallStatus,
      ...(row.error !== null ? { error: row.error } : {}),
      startedAt: row.startedAt,
      endedAt: row.endedAt,
      durationMs: row.durationMs,
      argsBytes: row.argsBytes,
      argsSha256: row.argsSha256,
      resultBytes: row.resultBytes,
      resultSha256: row.resultSha256,
      ...(row.args !== null && row.args !== undefined ? { args: row.args } : {}),
      ...(row.result !== null && row.result !== undefined ? { result: row.result } : {}),
    }));
  }
}
