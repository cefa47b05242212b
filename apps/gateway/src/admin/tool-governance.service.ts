import { Inject, Injectable } from '@nestjs/common';
import type { RedisClient } from '#transport/redis-connection.js';
import type { ToolBinding } from '#core/mcp/tool-bindings.js';
import type { ToolCallRecord } from '#core/mcp/tool-call-audit.js';
import type { Caller } from '#core/auth/caller.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { redisKeys } from '#transport/redis-keys.js';
import { ApiError } from '../common/api-error.js';
import { requireAdmin } from './require-admin.js';
import { invalidFields } from '../common/validation.js';
import { REDIS, STORE } from '../infra/tokens.js';
import type { CreateToolBindingDto, ToolCallQueryDto } from './tool-governance.dto.js';
import type { ToolBindingDeleted, ToolBindingList, ToolBindingView, ToolCallList, ToolCallView } from './tool-governance-views.dto.js';

/**
 * MCP governance for a tenant's admins: the tool bindings workers enforce (a change reaches
 * them from the next run), and the audit of every MCP call. Everyone else gets 403.
 */
@Injectable()
export class ToolGovernanceService {
  constructor(
    @Inject(STORE) private readonly store: ConversationStore,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  /** @throws ApiError 403 for a non-admin, 422 unless exactly one of agent_id and api_key_id is given. */
  async createBinding(caller: Caller, body: CreateToolBindingDto): Promise<ToolBindingView> {
    requireAdmin(caller);
    if ((body.agent_id === undefined) === (body.api_key_id === undefined)) {
      const message = 'give exactly one of agent_id and api_key_id';
      throw invalidFields({ agent_id: [message], api_key_id: [message] });
    }
    const created = await this.store.toolBindings.create({
      tenantId: caller.tenantId,
      ...(body.agent_id !== undefined ? { agentId: body.agent_id } : {}),
      ...(body.api_key_id !== undefined ? { apiKeyId: body.api_key_id } : {}),
      tools: [...new Set(body.tools)],
    });
    await this.redis.incr(redisKeys.toolBindingsVersion(caller.tenantId));
    return bindingView(created);
  }

  /** @throws ApiError 403 for a non-admin. */
  async listBindings(caller: Caller): Promise<ToolBindingList> {
    requireAdmin(caller);
    return { bindings: (await this.store.toolBindings.list(caller.tenantId)).map(bindingView) };
  }

  /** @throws ApiError 403 for a non-admin, 404 for a binding not of the caller's tenant. */
  async deleteBinding(caller: Caller, bindingId: string): Promise<ToolBindingDeleted> {
    requireAdmin(caller);
    if (!(await this.store.toolBindings.delete(caller.tenantId, bindingId))) throw ApiError.notFound('binding', bindingId);
    await this.redis.incr(redisKeys.toolBindingsVersion(caller.tenantId));
    return { binding_id: bindingId, deleted: true };
  }

  /** The tenant's MCP calls, newest first. @throws ApiError 403 for a non-admin. */
  async listCalls(caller: Caller, query: ToolCallQueryDto): Promise<ToolCallList> {
    requireAdmin(caller);
    const calls = await this.store.toolCalls.list(caller.tenantId, {
      sessionId: query.session_id,
      toolName: query.tool_name,
      status: query.status,
      limit: query.limit,
      offset: query.offset,
    });
    return { tool_calls: calls.map(callView), limit: query.limit, offset: query.offset };
  }
}


function bindingView(b: ToolBinding): ToolBindingView {
  return {
    binding_id: b.bindingId,
    ...(b.agentId !== undefined ? { agent_id: b.agentId } : {}),
    ...(b.apiKeyId !== undefined ? { api_key_id: b.apiKeyId } : {}),
    tools: b.tools,
    created_at: b.createdAt.toISOString(),
  };
}

function callView(r: ToolCallRecord): ToolCallView {
  return {
    call_id: r.callId,
    trace_id: r.traceId,
    user_id: r.userId,
    session_id: r.sessionId,
    run_id: r.runId,
    agent_id: r.agentId,
    ...(r.apiKeyId !== undefined ? { api_key_id: r.apiKeyId } : {}),
    server_id: r.serverName,
    tool_name: r.toolName,
    tool_call_id: r.toolCallId,
    schema_version: r.schemaVersion,
    validation: r.validation,
    status: r.status,
    ...(r.error !== undefined ? { error: r.error } : {}),
    started_at: r.startedAt.toISOString(),
    ended_at: r.endedAt.toISOString(),
    duration_ms: r.durationMs,
    args_bytes: r.argsBytes,
    args_sha256: r.argsSha256,
    result_bytes: r.resultBytes,
    result_sha256: r.resultSha256,
    ...(r.args !== undefined ? { args: r.args } : {}),
    ...(r.result !== undefined ? { result: r.result } : {}),
  };
}
