import { timingSafeEqual } from 'node:crypto';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** How a client is connected to a gateway: Socket.IO, plain WebSocket, or Server-Sent Events. */
export type SocketTransport = 'socketio' | 'ws' | 'sse';
const TRANSPORTS: readonly SocketTransport[] = ['socketio', 'ws', 'sse'];

/** How a run ended. */
export type RunOutcome = 'completed' | 'failed' | 'cancelled';
const OUTCOMES: readonly RunOutcome[] = ['completed', 'failed', 'cancelled'];

/** The label value that stands for every value past a {@link LabelCap}'s limit. */
export const OTHER_LABEL = 'other';

/**
 * Keeps a label's set of values bounded: the first `max` distinct values are used as they are,
 * later ones become {@link OTHER_LABEL}. For names that come from configuration but could in
 * principle grow (tool names of users' own MCP servers, names a model invents): each distinct
 * value is a time series of its own in Prometheus.
 */
export class LabelCap {
  private readonly seen = new Set<string>();

  constructor(private readonly max: number) {}

  /** `value` if it is already known or there is room for it; {@link OTHER_LABEL} otherwise. */
  of(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.max) return OTHER_LABEL;
    this.seen.add(value);
    return value;
  }
}

/**
 * Whether a scrape may read the metrics: always when no token is configured, otherwise only
 * with `Authorization: Bearer <token>` (compared in constant time).
 */
export function scrapeAllowed(authorization: string | undefined, token: string | undefined): boolean {
  if (!token) return true;
  const match = /^Bearer\s+(.+)$/i.exec(authorization?.trim() ?? '');
  if (!match) return false;
  const given = Buffer.from(match[1]!);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Seconds between two epoch-millisecond instants, never negative (the two may come from different hosts' clocks). */
export function secondsSince(startMs: number, endMs = Date.now()): number {
  return Math.max(0, endMs - startMs) / 1000;
}

/**
 * prom-client's default metrics that break Prometheus's naming conventions (`promtool check
 * metrics` fails on them): gauges named like counters. Each has a twin without the suffix
 * (`nodejs_active_handles`, …) that carries the same figure, so these are dropped.
 */
const NONCONFORMING_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/** Choices of a process's metrics. */
export interface MetricsOptions {
  /**
   * Label the usage counters with the tenant (DATAAGENT_METRICS_TENANT_LABEL): a series per
   * tenant and model, so only where the tenants are few enough to count.
   */
  tenantLabel?: boolean;
}

const FAST = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const REQUEST = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const WAIT = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * DataAgent's Prometheus metrics, one registry per process. The gateway and the workers create
 * the same families (so a dashboard can sum them); each records the ones it has something for.
 * No label ever carries a user, session, run or request id: routes are templates, tool names
 * are capped ({@link LabelCap}), everything else is a short fixed list.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({ name: 'dataagent_http_requests_total', help: 'HTTP requests answered, by route template, method and status', labelNames: ['route', 'method', 'status'] as const, registers: [this.registry] });
  readonly httpDuration = new Histogram({ name: 'dataagent_http_request_duration_seconds', help: 'Time from an HTTP request to its response finishing, by route template, method and status', labelNames: ['route', 'method', 'status'] as const, buckets: REQUEST, registers: [this.registry] });
  readonly openSockets = new Gauge({ name: 'dataagent_open_sockets', help: 'Client connections open now, by transport (socketio, ws, sse)', labelNames: ['transport'] as const, registers: [this.registry] });

  readonly runsQueued = new Counter({ name: 'dataagent_runs_queued_total', help: 'Runs a gateway put on the queue', registers: [this.registry] });
  readonly runsActive = new Gauge({ name: 'dataagent_runs_active', help: 'Runs a worker is executing now', registers: [this.registry] });
  readonly runsFinished = new Counter({ name: 'dataagent_runs_finished_total', help: 'Runs ended, by outcome (a worker ends the runs it ran; a gateway those cancelled while still queued)', labelNames: ['outcome'] as const, registers: [this.registry] });
  readonly runStartDelay = new Histogram({ name: 'dataagent_run_start_delay_seconds', help: "Time from the gateway queueing a chat's run to a worker's run_started", buckets: WAIT, registers: [this.registry] });
  readonly eventDelivery = new Histogram({ name: 'dataagent_event_delivery_seconds', help: "Time from an event's timestamp (set by the worker) to a gateway handing it to a client's connection; live events only", buckets: FAST, registers: [this.registry] });
  readonly cancelLatency = new Histogram({ name: 'dataagent_cancel_latency_seconds', help: "Time from a cancel request to the run's done, by where the run was (queued: ended by the gateway; running: by its worker)", labelNames: ['stage'] as const, buckets: FAST, registers: [this.registry] });

  readonly llmTimeToFirstToken = new Histogram({ name: 'dataagent_llm_time_to_first_token_seconds', help: 'Time from an LLM call to its first text or tool-call chunk, by model', labelNames: ['model'] as const, buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60], registers: [this.registry] });
  readonly llmTokensPerSecond = new Histogram({ name: 'dataagent_llm_tokens_per_second', help: 'Streamed text chunks (about one token each) per second after the first, per LLM call, by model', labelNames: ['model'] as const, buckets: [1, 5, 10, 20, 50, 100, 200, 500, 1000, 5000], registers: [this.registry] });
  readonly llmCalls = new Counter({ name: 'dataagent_llm_calls_total', help: 'LLM calls, by model and how they ended (ok, error, cancelled)', labelNames: ['model', 'status'] as const, registers: [this.registry] });

  readonly toolCallDuration = new Histogram({ name: 'dataagent_tool_call_duration_seconds', help: 'Tool calls (built-in, skills and MCP) by tool name and status', labelNames: ['tool', 'status'] as const, buckets: REQUEST, registers: [this.registry] });
  readonly mcpCallDuration = new Histogram({ name: 'dataagent_mcp_call_duration_seconds', help: 'MCP tool calls as audited, by server, tool (server.tool) and status', labelNames: ['server', 'tool', 'status'] as const, buckets: REQUEST, registers: [this.registry] });

  readonly mcpConnections = new Gauge({ name: 'dataagent_mcp_connections', help: "A worker's pooled MCP connections by server and status (connecting, connected, disconnected, error)", labelNames: ['server', 'status'] as const, registers: [this.registry] });
  readonly tenantRunSlots = new Counter({ name: 'dataagent_tenant_run_slot_requests_total', help: "Runs asking for one of their tenant's run slots (max_concurrent_runs), by result: granted, or refused with 429 tenant_run_limit", labelNames: ['result'] as const, registers: [this.registry] });

  /** Model tokens by model and kind (input, output, cached_input; input counts the cached ones too), and by tenant when {@link MetricsOptions.tenantLabel}. */
  readonly modelTokens: Counter<string>;
  /** What model calls cost, by model and currency (and tenant when {@link MetricsOptions.tenantLabel}): exact per call, summed as a float here. */
  readonly modelCost: Counter<string>;

  readonly poolConnections = new Gauge({ name: 'dataagent_pool_connections', help: 'Connections of a pool by state (mcp: open, leased; mysql: open, idle, waiting requests)', labelNames: ['pool', 'state'] as const, registers: [this.registry] });

  private readonly samplers: Array<() => void | Promise<void>> = [];
  private readonly exporters: Array<() => Promise<string>> = [];

  /**
   * @param defaults Node's process metrics (event-loop lag, heap, GC, CPU); off only in unit tests, where they would keep timers running.
   * @param options Which optional labels the usage counters carry.
   */
  constructor(defaults = true, options: MetricsOptions = {}) {
    const tenant = options.tenantLabel ? ['tenant'] : [];
    this.modelTokens = new Counter({ name: 'dataagent_model_tokens_total', help: 'Tokens of model calls as metered, by model and kind (input, output, cached_input; input includes cached_input)', labelNames: ['model', 'kind', ...tenant], registers: [this.registry] });
    this.modelCost = new Counter({ name: 'dataagent_model_cost_total', help: "What model calls cost, in the price table's currency, by model and currency", labelNames: ['model', 'currency', ...tenant], registers: [this.registry] });
    if (defaults) {
      collectDefaultMetrics({ register: this.registry });
      for (const name of NONCONFORMING_DEFAULTS) this.registry.removeSingleMetric(name);
    }
    // Every series a dashboard expects exists from the start, at zero.
    for (const transport of TRANSPORTS) this.openSockets.labels(transport).set(0);
    for (const outcome of OUTCOMES) this.runsFinished.labels(outcome).inc(0);
    for (const result of ['granted', 'refused']) this.tenantRunSlots.labels(result).inc(0);
  }

  /** Runs `sample` before each scrape: for gauges read from elsewhere (pool sizes, active runs). */
  sampleOnScrape(sample: () => void | Promise<void>): void {
    this.samplers.push(sample);
  }

  /** Reads a pool's connection counts by state before each scrape; `read` answers null when there is nothing to report (no such pool). */
  samplePool(pool: string, read: () => Readonly<Record<string, number>> | null): void {
    this.sampleOnScrape(() => {
      for (const [state, count] of Object.entries(read() ?? {})) this.poolConnections.labels(pool, state).set(count);
    });
  }

  /** Appends another exporter's text to each scrape (BullMQ's queue counts). */
  appendOnScrape(exporter: () => Promise<string>): void {
    this.exporters.push(exporter);
  }

  /**
   * The Prometheus text of everything registered. A sampler or exporter that fails (Redis out
   * of reach, say) leaves its part out instead of failing the whole scrape.
   */
  async scrape(): Promise<string> {
    await Promise.all(this.samplers.map(async (sample) => sample()).map((p) => p.catch(() => undefined)));
    const extra = await Promise.all(this.exporters.map((exporter) => exporter().catch(() => '')));
    const own = await this.registry.metrics();
    return [own.trimEnd(), ...extra.map((text) => text.trimEnd()).filter(Boolean)].join('\n') + '\n';
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
