import type { AgentMiddleware } from '#core/engine/agent-middleware.js';
import type { ChatModel, ModelRequest } from '#core/llm/chat-model.js';
import type { ToolCallRecord } from '#core/mcp/tool-call-audit.js';
import { contextFrom, endWithError, SpanKind, startSpan, trace, type Context } from '#telemetry/tracing.js';
import type { RunJobData } from '#core/run/run-ports.js';

/** One run's part of its trace: the model and middleware that record into it, and its end. */
export interface RunTrace {
  /** The trace's id when tracing is on (the audit then carries the same id); undefined otherwise. */
  traceId?: string;
  /** The run's model, each call a span. */
  model(model: ChatModel): ChatModel;
  /** A span per tool call, whatever its outcome. */
  middleware: AgentMiddleware[];
  end(status: 'completed' | 'failed' | 'cancelled' | 'timeout' | 'handed_off', error?: string): void;
}

const OFF: RunTrace = { model: (m) => m, middleware: [], end: () => {} };

/**
 * The worker's runs in their traces: each run is a span under the gateway's `chat.submit` (its
 * job's traceparent), with a span for every model call, tool call and MCP call below it. Parents
 * are passed explicitly: an agent run is an async generator, where the active context is not
 * reliable. Off (no OTLP endpoint): nothing is created.
 */
export class RunTraces {
  private readonly runs = new Map<string, Context>();

  constructor(private readonly enabled: boolean) {}

  start(job: RunJobData): RunTrace {
    if (!this.enabled) return OFF;
    const parent = contextFrom(job.traceparent);
    const span = startSpan('agent.run', parent, { 'dataagent.run_id': job.runId, 'dataagent.session_id': job.sessionId, 'dataagent.tenant_id': job.tenantId, 'dataagent.user_id': job.userId, 'dataagent.agent_id': job.assistantId }, SpanKind.CONSUMER);
    const ctx = trace.setSpan(parent, span);
    this.runs.set(job.runId, ctx);
    let ended = false;
    return {
      traceId: span.spanContext().traceId,
      model: (model) => tracedModel(model, ctx),
      middleware: [toolSpans(ctx)],
      end: (status, error) => {
        if (ended) return;
        ended = true;
        this.runs.delete(job.runId);
        span.setAttribute('dataagent.run_status', status);
        if (status === 'failed') endWithError(span, error ?? 'the run failed');
        else span.end();
      },
    };
  }

  /** An MCP call's span, from its audit record (so refused, failed, timed-out and cancelled calls have one too). */
  mcpCall(record: ToolCallRecord): void {
    const parent = this.runs.get(record.runId);
    if (!parent) return;
    const span = startSpan(
      `mcp.call ${record.toolName}`,
      parent,
      {
        'dataagent.trace_id': record.traceId,
        'dataagent.user_id': record.userId,
        'dataagent.session_id': record.sessionId,
        'dataagent.agent_id': record.agentId,
        'mcp.server_id': record.serverName,
        'mcp.tool_name': record.toolName,
        'mcp.tool_call_id': record.toolCallId,
        'mcp.schema_version': record.schemaVersion,
        'mcp.validation': record.validation,
        'mcp.status': record.status,
        'mcp.args_bytes': record.argsBytes,
        'mcp.result_bytes': record.resultBytes,
      },
      SpanKind.CLIENT,
      record.startedAt,
    );
    if (record.status === 'ok') span.end(record.endedAt);
    else endWithError(span, record.error ?? record.status, record.endedAt);
  }
}

/** A model whose every call is an `llm.call` span: time to the first chunk, chunks, tokens used (when the provider says), and how it ended. */
function tracedModel(model: ChatModel, parent: Context): ChatModel {
  return {
    id: model.id,
    async *stream(request: ModelRequest) {
      const started = Date.now();
      const span = startSpan('llm.call', parent, { 'gen_ai.request.model': model.id, 'llm.messages': request.messages.length, 'llm.tools': request.tools.length }, SpanKind.CLIENT);
      let chunks = 0;
      let ended = false;
      try {
        for await (const chunk of model.stream(request)) {
          if (chunks++ === 0) span.setAttribute('llm.time_to_first_chunk_ms', Date.now() - started);
          if (chunk.type === 'usage') span.setAttributes({ 'gen_ai.usage.input_tokens': chunk.inputTokens, 'gen_ai.usage.output_tokens': chunk.outputTokens });
          yield chunk;
        }
        span.setAttribute('llm.chunks', chunks);
        span.end();
        ended = true;
      } catch (err) {
        ended = true;
        endWithError(span, request.signal.aborted ? 'cancelled' : err instanceof Error ? err.message : String(err));
        throw err;
      } finally {
        // The consumer stopped reading (a cancel, a hand-off).
        if (!ended) {
          span.setAttribute('llm.chunks', chunks);
          span.end();
        }
      }
    },
  };
}

/** A `tool.call` span around each tool call, closed however it ends. */
function toolSpans(parent: Context): AgentMiddleware {
  return {
    name: 'tool-spans',
    async wrapToolCall(call, ctx, next) {
      const span = startSpan(`tool.call ${call.name}`, parent, { 'tool.name': call.name, 'tool.call_id': ctx.toolCallId }, SpanKind.INTERNAL);
      try {
        const result = await next(call, ctx);
        span.setAttribute('tool.status', result.status ?? (result.success ? 'success' : 'error'));
        if (result.success) span.end();
        else endWithError(span, result.error ?? 'failed');
        return result;
      } catch (err) {
        endWithError(span, err instanceof Error ? err.message : String(err));
        throw err;
      }
    },
  };
}
