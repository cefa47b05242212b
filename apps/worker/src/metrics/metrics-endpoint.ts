import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import type { ConversationStore } from '#core/session/session-store.js';
import { MysqlConversationStore } from '#persistence/mysql-conversation-store.js';
import { LabelCap, Metrics } from '#telemetry/metrics.js';
import { serveMetrics, type MetricsServer } from '#telemetry/metrics-server.js';
import { LOGGER, MCP, SETTINGS, STORE } from '../infra/tokens.js';
import type { McpRuntime } from '../mcp/mcp-runtime.js';
import type { WorkerSettings } from '../infra/worker-config.js';
import { MAX_SERVER_LABELS } from './run-metrics.js';

/**
 * The worker's metrics on a port of its own (DATAAGENT_METRICS_PORT): a worker serves no other
 * HTTP. Pool sizes are read at each scrape. A port that cannot be bound is logged and the
 * worker runs on without metrics: they must never keep it from taking runs.
 */
@Injectable()
export class MetricsEndpoint implements OnApplicationBootstrap, OnApplicationShutdown {
  private server?: MetricsServer;

  constructor(
    @Inject(SETTINGS) private readonly settings: WorkerSettings,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: Metrics,
    @Inject(MCP) private readonly mcp: McpRuntime,
    @Inject(STORE) private readonly store: ConversationStore,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { enabled, host, port, token } = this.settings.metrics;
    if (!enabled) return;
    this.metrics.samplePool('mcp', () => {
      const { total, leased } = this.mcp.pool.stats();
      return { open: total, leased };
    });
    // Zero for a server/status pair no connection is in any more: the gauge starts over each scrape.
    const servers = new LabelCap(MAX_SERVER_LABELS);
    this.metrics.sampleOnScrape(() => {
      const counts = new Map<string, { server: string; status: string; count: number }>();
      for (const { server, status } of this.mcp.pool.statuses()) {
        const label = servers.of(server);
        const key = `${label}\n${status}`;
        const found = counts.get(key) ?? counts.set(key, { server: label, status, count: 0 }).get(key)!;
        found.count++;
      }
      this.metrics.mcpConnections.reset();
      for (const { server, status, count } of counts.values()) this.metrics.mcpConnections.labels(server, status).set(count);
    });
    const store = this.store;
    this.metrics.samplePool('mysql', () => (store instanceof MysqlConversationStore ? store.poolStats() : null));
    try {
      this.server = await serveMetrics(this.metrics, { host, port, ...(token ? { token } : {}) });
    } catch (err) {
      this.logger.error({ err, host, port }, 'could not serve metrics (DATAAGENT_METRICS_PORT); running without them');
      return;
    }
    // One machine-readable line, whatever the log level, so scripts and tests find the port (0 picks a free one).
    console.log(JSON.stringify({ msg: 'worker metrics listening', url: this.server.url, port: this.server.port }));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.close();
  }
}
