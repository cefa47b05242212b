import { createHash, randomUUID } from 'node:crypto';
import type { AgentMiddleware } from '#core/engine/agent-middleware.js';
import type { ToolCallRecord, ToolCallStatus } from '#core/mcp/tool-call-audit.js';
import type { ToolResult } from '#core/tools/tool.js';

/** The run an MCP call belongs to, as the audit records it. */
export type AuditedRun = Pick<ToolCallRecord, 'traceId' | 'tenantId' | 'userId' | 'sessionId' | 'runId' | 'agentId' | 'apiKeyId'>;

/** What the run knows of each MCP server it was equipped with. */
export interface GovernedServer {
  /** Why it could not be reached for this run; absent when connected. */
  unavailable?: string;
  /** Its tools' schema versions, by tool name on the server. */
  schemaVersions: ReadonlyMap<string, string>;
}

export interface GovernanceOptions {
  run: AuditedRun;
  servers: ReadonlyMap<string, GovernedServer>;
  /** Whether the run's bindings allow a `server.tool`; null: no binding applies, all are allowed. */
  allowed: ((toolName: string) => boolean) | null;
  /** Takes each call's record (written in batches, off the run's path). */
  audit: (record: ToolCallRecord) => void;
  /** Keep arguments and results in the audit (DATAAGENT_AUDIT_PAYLOADS), not only sizes and hashes. */
  payloads: boolean;
  /** Each offered tool's full input schema: a call with wrong arguments gets it back (Level 3). */
  schemas?: ReadonlyMap<string, Record<string, unknown>>;
}

/**
 * Governs every call to an MCP tool of the run, on the dispatcher's path: a tool its bindings do
 * not allow is refused (`tool_not_allowed`), a server that could not be reached answers why,
 * and every call, refused or not, leaves an audit record. Schema checks, approval, timeouts and
 * retries happen inside (the dispatcher, the executor and the tool); this layer sees their outcome.
 */
export function mcpGovernance(options: GovernanceOptions): AgentMiddleware {
  const { run, servers } = options;
  return {
    name: 'mcp-governance',
    async wrapToolCall(call, ctx, next) {
      const named = resolveName(call.name, servers);
      if (!named) return next(call, ctx);
      const { server, tool, qualified } = named;
      const startedAt = new Date();
      const governed = servers.get(server)!;
      let result: ToolResult;
      if (governed.unavailable !== undefined) {
        result = refusal(`The ${server} MCP server is unavailable for this turn, so ${qualified} did not run: ${governed.unavailable}. Trying again in a later turn may work.`, { retry: true });
      } else if (options.allowed && !options.allowed(qualified)) {
        result = refusal(`${qualified} is not allowed for this assistant (tool_not_allowed): it is not in its tool bindings. Use another tool, or tell the person it is not available.`, {
          error_code: 'tool_not_allowed',
          retry: false,
        });
      } else {
        result = await next(call, ctx);
        const schema = options.schemas?.get(qualified);
        const details = result.output as { error_code?: unknown } | null;
        if (!result.success && details?.error_code === 'invalid_arguments' && schema) result = { ...result, output: { ...details, schema } };
      }
      const endedAt = new Date();
      options.audit(auditRecord(options, call, ctx.toolCallId, named, governed.schemaVersions.get(tool) ?? '', result, ctx.signal.aborted, startedAt, endedAt));
      return result;
    },
  };
}

/** `server.tool` or its wire spelling `server__tool`, for a server the run knows; null for anything else. */
function resolveName(name: string, servers: ReadonlyMap<string, GovernedServer>): { server: string; tool: string; qualified: string } | null {
  const dot = name.indexOf('.');
  if (dot > 0 && servers.has(name.slice(0, dot))) return { server: name.slice(0, dot), tool: name.slice(dot + 1), qualified: name };
  const wire = name.indexOf('__');
  if (wire > 0 && servers.has(name.slice(0, wire))) {
    const server = name.slice(0, wire);
    const tool = name.slice(wire + 2);
    return { server, tool, qualified: `${server}.${tool}` };
  }
  return null;
}

function refusal(error: string, details: Record<string, unknown>): ToolResult {
  return { success: false, output: details, error, status: 'error' };
}

function auditRecord(
  options: GovernanceOptions,
  call: { arguments: Record<string, unknown> },
  toolCallId: string,
  named: { server: string; qualified: string },
  schemaVersion: string,
  result: ToolResult,
  aborted: boolean,
  startedAt: Date,
  endedAt: Date,
): ToolCallRecord {
  const output = (result.output ?? {}) as { error_code?: unknown; reason?: unknown };
  const invalidInput = !result.success && output.error_code === 'invalid_arguments';
  const invalidOutput = !result.success && output.reason === 'invalid_output';
  const status: ToolCallStatus =
    result.success ? 'ok'
    : output.error_code === 'tool_not_allowed' ? 'denied'
    : invalidInput || invalidOutput ? 'invalid'
    : result.status === 'timeout' ? 'timeout'
    : result.status === 'cancelled' || aborted ? 'cancelled'
    : 'error';
  const args = JSON.stringify(call.arguments) ?? '';
  const shown = JSON.stringify(result.success ? result.output : { error: result.error, details: result.output }) ?? '';
  return {
    callId: randomUUID(),
    ...options.run,
    serverName: named.server,
    toolName: named.qualified,
    toolCallId,
    schemaVersion,
    // A call that reached the dispatcher with a known tool had its input checked.
    validation: invalidInput ? 'invalid_input' : invalidOutput ? 'invalid_output' : status !== 'denied' && schemaVersion ? 'ok' : 'not_checked',
    status,
    ...(result.success ? {} : { error: (result.error ?? 'failed').slice(0, 2_000) }),
    startedAt,
    endedAt,
    durationMs: Math.max(0, endedAt.getTime() - startedAt.getTime()),
    argsBytes: Buffer.byteLength(args),
    argsSha256: sha256(args),
    resultBytes: Buffer.byteLength(shown),
    resultSha256: sha256(shown),
    ...(options.payloads ? { args: call.arguments, result: result.success ? result.output : { error: result.error, details: result.output } } : {}),
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A W3C trace id (32 hex) for a run that has none yet: its id without dashes when that is a UUID. */
export function traceIdFor(runId: string): string {
  const hex = runId.replace(/-/g, '').toLowerCase();
  return /^[0-9a-f]{32}$/.test(hex) ? hex : sha256(runId).slice(0, 32);
}
