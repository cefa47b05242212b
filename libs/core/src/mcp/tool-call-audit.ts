/** How an MCP call ended, as the audit records it. */
export type ToolCallStatus = 'ok' | 'error' | 'timeout' | 'denied' | 'invalid' | 'cancelled';
export const TOOL_CALL_STATUSES: readonly ToolCallStatus[] = ['ok', 'error', 'timeout', 'denied', 'invalid', 'cancelled'];

/** One MCP tool call (`mcp_tool_call_log`): who, what, how it ended; payloads only as sizes and hashes unless configured. */
export interface ToolCallRecord {
  callId: string;
  /** W3C trace id (32 hex) of the run. */
  traceId: string;
  tenantId: string;
  userId: string;
  sessionId: string;
  runId: string;
  /** The assistant. */
  agentId: string;
  apiKeyId?: string;
  serverName: string;
  /** `server.tool`. */
  toolName: string;
  toolCallId: string;
  /** The tool's schema version in the catalog; empty for a tool the run did not have. */
  schemaVersion: string;
  /** What the checks found: `ok`, `invalid_input` (refused before the call), `invalid_output` (broke its output schema), or `not_checked`. */
  validation: 'ok' | 'invalid_input' | 'invalid_output' | 'not_checked';
  status: ToolCallStatus;
  /** The reason in the model's words, for anything but `ok`. */
  error?: string;
  startedAt: Date;
  endedAt: Date;
  durationMs: number;
  argsBytes: number;
  argsSha256: string;
  resultBytes: number;
  resultSha256: string;
  /** Only with DATAAGENT_AUDIT_PAYLOADS=true. */
  args?: unknown;
  result?: unknown;
}

export interface ToolCallQuery {
  sessionId?: string;
  toolName?: string;
  status?: ToolCallStatus;
  limit: number;
  offset: number;
}

/** The audit log of MCP calls, written by workers in batches and read by admins. */
export interface ToolCallAuditStore {
  /** Idempotent per callId: a batch written twice is stored once. */
  append(records: readonly ToolCallRecord[]): Promise<void>;
  /** The tenant's calls, newest first. */
  list(tenantId: string, query: ToolCallQuery): Promise<ToolCallRecord[]>;
}

/** The audit log in process memory (DATAAGENT_SESSION_STORE=memory and unit tests). */
export class MemoryToolCallAuditStore implements ToolCallAuditStore {
  private readonly records = new Map<string, ToolCallRecord>();

  async append(records: readonly ToolCallRecord[]): Promise<void> {
    for (const record of records) if (!this.records.has(record.callId)) this.records.set(record.callId, structuredClone(record));
  }

  async list(tenantId: string, query: ToolCallQuery): Promise<ToolCallRecord[]> {
    return [...this.records.values()]
      .filter((r) => r.tenantId === tenantId && (!query.sessionId || r.sessionId === query.sessionId) && (!query.toolName || r.toolName === query.toolName) && (!query.status || r.status === query.status))
      .sort((a, b) => b.startedAt.getTime() - a.startedAt.getTime())
      .slice(query.offset, query.offset + query.limit)
      .map((r) => structuredClone(r));
  }
}
