import type { ChatModel, ModelChunk } from '#core/llm/chat-model.js';
import type { ToolContext, ToolResult } from '#core/tools/tool.js';
import { Metrics } from '#telemetry/metrics.js';
import { RunMetrics } from './run-metrics.js';
import type { RunJobData } from '#core/run/run-ports.js';

const job = (runId: string, enqueuedAt = Date.now()): RunJobData => ({ runId, sessionId: 's', tenantId: 't', userId: 'u', assistantId: 'default', message: 'hi', enqueuedAt });

async function values(metrics: Metrics, name: string): Promise<Array<{ labels: Record<string, unknown>; value: number; metricName?: string }>> {
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  return (await metric.get()).values as Array<{ labels: Record<string, unknown>; value: number; metricName?: string }>;
}

/** The `_count` of a histogram with these labels. */
async function count(metrics: Metrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const found = (await values(metrics, name)).find((v) => v.metricName === `${name}_count` && Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return found?.value ?? 0;
}

/** A model that yields `chunks`, `gapMs` apart, then fails when `fail` is set. */
function model(chunks: ModelChunk[], gapMs = 0, fail?: Error): ChatModel {
  return {
    id: 'test-model',
    async *stream() {
      for (const chunk of chunks) {
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
        yield chunk;
      }
      if (fail) throw fail;
    },
  };
}

async function drain(m: ChatModel, signal = new AbortController().signal): Promise<void> {
  for await (const _ of m.stream({ messages: [], tools: [], signal })) void _;
}

describe('RunMetrics', () => {
  let metrics: Metrics;
  let runs: RunMetrics;

  beforeEach(() => {
    metrics = new Metrics(false);
    runs = new RunMetrics(metrics);
  });

  it('counts a run active until it ends, and its outcome once', async () => {
    const meter = runs.start(job('r1'));
    expect((await values(metrics, 'dataagent_runs_active'))[0]!.value).toBe(1);
    meter.end('failed');
    meter.end('completed');
    expect((await values(metrics, 'dataagent_runs_active'))[0]!.value).toBe(0);
    const finished = await values(metrics, 'dataagent_runs_finished_total');
    expect(Object.fromEntries(finished.map((v) => [v.labels.outcome, v.value]))).toEqual({ completed: 0, failed: 1, cancelled: 0 });
  });

  it('counts no outcome for a run handed to another worker', async () => {
    runs.start(job('r1')).end('handed_off');
    expect((await values(metrics, 'dataagent_runs_finished_total')).every((v) => v.value === 0)).toBe(true);
    expect((await values(metrics, 'dataagent_runs_active'))[0]!.value).toBe(0);
  });

  it('times a cancel from its request to the end of a run held here, and only then', async () => {
    const cancelled = runs.start(job('r1'));
    runs.cancelRequested('r1', Date.now() - 2_000);
    runs.cancelRequested('not-here', Date.now());
    cancelled.end('cancelled');
    runs.start(job('r2')).end('cancelled');
    const sum = (await values(metrics, 'dataagent_cancel_latency_seconds')).find((v) => v.metricName === 'dataagent_cancel_latency_seconds_sum');
    expect(await count(metrics, 'dataagent_cancel_latency_seconds', { stage: 'running' })).toBe(1);
    expect(sum!.value).toBeGreaterThanOrEqual(2);
  });

  it('observes the wait from queueing to run_started', async () => {
    runs.start(job('r1', Date.now() - 1_500)).started();
    expect(await count(metrics, 'dataagent_run_start_delay_seconds')).toBe(1);
  });

  it('times the first token and the rate of text chunks of a model call', async () => {
    const meter = runs.start(job('r1'));
    await drain(meter.model(model([{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }, { type: 'text', text: 'c' }, { type: 'finish', reason: 'stop' }], 5)));
    expect(await count(metrics, 'dataagent_llm_time_to_first_token_seconds', { model: 'test-model' })).toBe(1);
    expect(await count(metrics, 'dataagent_llm_tokens_per_second', { model: 'test-model' })).toBe(1);
    const calls = await values(metrics, 'dataagent_llm_calls_total');
    expect(calls).toEqual([expect.objectContaining({ labels: { model: 'test-model', status: 'ok' }, value: 1 })]);
  });

  it('observes no rate for a call with a single text chunk, and counts a failed call as error', async () => {
    const meter = runs.start(job('r1'));
    await expect(drain(meter.model(model([{ type: 'text', text: 'only' }], 0, new Error('boom'))))).rejects.toThrow('boom');
    expect(await count(metrics, 'dataagent_llm_tokens_per_second')).toBe(0);
    expect(await values(metrics, 'dataagent_llm_calls_total')).toEqual([expect.objectContaining({ labels: { model: 'test-model', status: 'error' }, value: 1 })]);
  });

  it('times tool calls by name and status; a name the run has no tool for is `unknown`', async () => {
    const meter = runs.start(job('r1'));
    const middleware = meter.middleware(new Set(['write_todos']));
    const ctx = {} as ToolContext;
    const ok: ToolResult = { success: true, output: 'ok' };
    await middleware.wrapToolCall!({ id: '1', name: 'write_todos', arguments: {} }, ctx, async () => ok);
    await middleware.wrapToolCall!({ id: '2', name: 'made_up_by_the_model', arguments: {} }, ctx, async () => ({ success: false, output: null, error: 'Tool not found', status: 'error' }));
    await expect(middleware.wrapToolCall!({ id: '3', name: 'write_todos', arguments: {} }, ctx, async () => Promise.reject(new Error('thrown')))).rejects.toThrow('thrown');
    expect(await count(metrics, 'dataagent_tool_call_duration_seconds', { tool: 'write_todos', status: 'success' })).toBe(1);
    expect(await count(metrics, 'dataagent_tool_call_duration_seconds', { tool: 'write_todos', status: 'error' })).toBe(1);
    expect(await count(metrics, 'dataagent_tool_call_duration_seconds', { tool: 'unknown', status: 'error' })).toBe(1);
  });

  it("counts each call's tokens by kind and its cost by model; the tenant only where the operator asked for it", async () => {
    const call = { model: 'openai:gpt-4o', call: 1, inputTokens: 1000, outputTokens: 50, cachedInputTokens: 400, estimated: false, cost: '0.003250000000', currency: 'USD', priced: true };
    const meter = runs.start(job('r1'));
    meter.usage(call);
    meter.usage({ ...call, call: 2, cachedInputTokens: 0, cost: '0.001000000000' });
    const tokens = (await values(metrics, 'dataagent_model_tokens_total')).map((v) => [v.labels.model, v.labels.kind, v.labels.tenant, v.value]);
    expect(tokens).toEqual([
      ['openai:gpt-4o', 'input', undefined, 2000],
      ['openai:gpt-4o', 'output', undefined, 100],
      ['openai:gpt-4o', 'cached_input', undefined, 400],
    ]);
    expect((await values(metrics, 'dataagent_model_cost_total')).map((v) => [v.labels.model, v.labels.currency, v.value])).toEqual([['openai:gpt-4o', 'USD', 0.00425]]);

    const labelled = new Metrics(false, { tenantLabel: true });
    new RunMetrics(labelled, true).start(job('r2')).usage(call);
    expect((await values(labelled, 'dataagent_model_cost_total')).map((v) => v.labels)).toEqual([{ model: 'openai:gpt-4o', currency: 'USD', tenant: 't' }]);
  });
});
