import { performance } from 'node:perf_hooks';
import type { AgentMiddleware } from '#core/engine/agent-middleware.js';
import type { ChatModel, ModelRequest } from '#core/llm/chat-model.js';
import type { CallUsage } from '#core/events/execution-event.js';
import type { ToolCallRecord } from '#core/mcp/tool-call-audit.js';
import { LabelCap, secondsSince, type Metrics } from '#telemetry/metrics.js';
import type { RunJobData } from '#core/run/run-ports.js';

/** Distinct tool names (and MCP servers) a worker reports before the rest count as `other`. */
const MAX_TOOL_LABELS = 300;
export const MAX_SERVER_LABELS = 100;
const MAX_MODEL_LABELS = 50;

/** One run's part of the worker's metrics. */
export interface RunMeter {
  /** The run's run_started went out: the wait since the gateway queued it is observed. */
  started(): void;
  /** The run's model, each call timed: time to first token, tokens per second, outcome. */
  model(model: ChatModel): ChatModel;
  /** Times each tool call; names outside `tools` (a name the model invented) count as `unknown`. */
  middleware(tools: ReadonlySet<string>): AgentMiddleware;
  /** A model call's usage, as the run's log recorded it: its tokens and cost by model (and tenant, where the operator turned that on). */
  usage(usage: CallUsage): void;
  /** Counts the run's outcome once; a run handed to another worker has none here. */
  end(status: 'completed' | 'failed' | 'cancelled' | 'timeout' | 'handed_off'): void;
}

/**
 * What the worker's runs feed into its metrics: active and finished runs, the queue wait,
 * model calls, tool and MCP calls, and how long a cancel took.
 */
export class RunMetrics {
  /** When a cancel was requested, for runs held here (the control message says). */
  private readonly cancels = new Map<string, number>();
  private readonly active = new Set<string>();
  private readonly tools = new LabelCap(MAX_TOOL_LABELS);
  private readonly mcpTools = new LabelCap(MAX_TOOL_LABELS);
  private readonly servers = new LabelCap(MAX_SERVER_LABELS);
  private readonly models = new LabelCap(MAX_MODEL_LABELS);

  /** @param tenantLabel Whether the usage counters carry a `tenant` label (DATAAGENT_METRICS_TENANT_LABEL; the Metrics must have been made so). */
  constructor(
    private readonly metrics: Metrics,
    private readonly tenantLabel = false,
  ) {}

  start(job: RunJobData): RunMeter {
    const { metrics } = this;
    this.active.add(job.runId);
    metrics.runsActive.inc();
    let ended = false;
    return {
      started: () => metrics.runStartDelay.observe(secondsSince(job.enqueuedAt)),
      model: (model) => meteredModel(model, metrics, this.models.of(model.id)),
      middleware: (tools) => meteredTools(metrics, (name) => (tools.has(name) ? this.tools.of(name) : 'unknown')),
      usage: (usage) => {
        const model = this.models.of(usage.model);
        const tenant = this.tenantLabel ? { tenant: job.tenantId } : {};
        metrics.modelTokens.inc({ model, kind: 'input', ...tenant }, usage.inputTokens);
        metrics.modelTokens.inc({ model, kind: 'output', ...tenant }, usage.outputTokens);
        metrics.modelTokens.inc({ model, kind: 'cached_input', ...tenant }, usage.cachedInputTokens);
        metrics.modelCost.inc({ model, currency: usage.currency, ...tenant }, Number(usage.cost));
      },
      end: (status) => {
        if (ended) return;
        ended = true;
        this.active.delete(job.runId);
        metrics.runsActive.dec();
        const requestedAt = this.cancels.get(job.runId);
        this.cancels.delete(job.runId);
        if (status === 'handed_off') return;
        metrics.runsFinished.labels(status).inc();
        if (status === 'cancelled' && requestedAt !== undefined) metrics.cancelLatency.labels('running').observe(secondsSince(requestedAt));
      },
    };
  }

  /**
   * A cancel for a run held here arrived.
   * @param requestedAt When the gateway took the request (epoch ms); now when the message does not say.
   */
  cancelRequested(runId: string, requestedAt = Date.now()): void {
    if (this.active.has(runId) && !this.cancels.has(runId)) this.cancels.set(runId, requestedAt);
  }

  /** An MCP call, from its audit record (refused, failed, timed-out and cancelled calls too). */
  mcpCall(record: ToolCallRecord): void {
    this.metrics.mcpCallDuration.labels(this.servers.of(record.serverName), this.mcpTools.of(record.toolName), record.status).observe(record.durationMs / 1000);
  }
}

/**
 * A model whose calls are timed. Per chunk it only compares and counts (no allocation): the
 * figures are observed once, when the call ends.
 */
function meteredModel(model: ChatModel, metrics: Metrics, label: string): ChatModel {
  return {
    id: model.id,
    async *stream(request: ModelRequest) {
      const started = performance.now();
      let answered = false;
      let texts = 0;
      let firstText = 0;
      let lastText = 0;
      let status: 'ok' | 'error' | 'cancelled' = 'cancelled';
      try {
        for await (const chunk of model.stream(request)) {
          if (!answered && (chunk.type === 'text' || chunk.type === 'tool_calls')) {
            answered = true;
            metrics.llmTimeToFirstToken.labels(label).observe((performance.now() - started) / 1000);
          }
          if (chunk.type === 'text') {
            lastText = performance.now();
            if (texts++ === 0) firstText = lastText;
          }
          yield chunk;
        }
        status = 'ok';
      } catch (err) {
        status = request.signal.aborted ? 'cancelled' : 'error';
        throw err;
      } finally {
        // Still 'cancelled' here when the consumer stopped reading (a cancel, a hand-off).
        metrics.llmCalls.labels(label, status).inc();
        if (texts > 1 && lastText > firstText) metrics.llmTokensPerSecond.labels(label).observe((texts - 1) / ((lastText - firstText) / 1000));
      }
    },
  };
}

/** Times every tool call, whatever its outcome. */
function meteredTools(metrics: Metrics, labelOf: (name: string) => string): AgentMiddleware {
  return {
    name: 'tool-metrics',
    async wrapToolCall(call, ctx, next) {
      const started = performance.now();
      let status = 'error';
      try {
        const result = await next(call, ctx);
        status = result.status ?? (result.success ? 'success' : 'error');
        return result;
      } finally {
        metrics.toolCallDuration.labels(labelOf(call.name), status).observe((performance.now() - started) / 1000);
      }
    },
  };
}
