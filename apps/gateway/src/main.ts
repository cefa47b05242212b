import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { RequestMethod, ValidationPipe } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { ConfigError } from '#core/config/env.js';
import { AppModule } from './app.module.js';
import { ApiExceptionFilter } from './common/api-exception.filter.js';
import { validationError } from './common/validation.js';
import { ConfiguredIoAdapter } from './infra/configured-io.adapter.js';
import { OriginPolicy } from './infra/origin-policy.js';
import { ApiError } from './common/api-error.js';
import { openAiErrorBody } from './dialects/openai-errors.js';
import { Metrics } from '#telemetry/metrics.js';
import { RunQueue } from '#transport/run-queue.js';
import { startTracing } from '#telemetry/tracing.js';
import { plainJson } from './common/plain-json.js';
import { loadGatewaySettings, type GatewaySettings } from './infra/gateway-config.js';
import { GatewayLogger } from './logging/gateway-logger.js';
import { instrumentHttp } from './metrics/http-metrics.js';
import { serveQueueDepth } from './metrics/queue-depth.js';
import { queueMetrics } from './metrics/queue-metrics.js';
import { serveWebUi } from './web/web-ui.js';
import { serveApiDocs } from './docs/api-docs.js';
import { serveQueueBoard } from './admin/queue-board.js';
import { HEALTH_PATH } from './health/health.controller.js';
import { followPrimaryShutdown, GatewayPrimary, gatewayUrl, isGatewayClusterProcess } from './infra/gateway-cluster.js';
import { ClusterMetricsClient } from './metrics/cluster-metrics.js';
import { API_PREFIX } from './common/api-prefix.js';
import { AGENT_CARD_PATH } from './dialects/a2a/agent-card.controller.js';
import { DESCRIPTOR_RESERVE, openFilesLimit } from './infra/open-files.js';
import { repositoryRoot } from './infra/repository-root.js';

const { version } = JSON.parse(readFileSync(join(repositoryRoot(), 'package.json'), 'utf8')) as { version: string };

async function main(): Promise<void> {
  let settings: GatewaySettings;
  try {
    settings = loadGatewaySettings(version);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const { server } = settings;
  const inCluster = isGatewayClusterProcess();
  if (server.workers > 1 && !inCluster) {
    // DATAAGENT_WORKERS gateway processes on one port; this one only looks after them.
    new GatewayPrimary({ processes: server.workers, host: server.host, logLevel: settings.log.level }).start();
    return;
  }
  if (inCluster) followPrimaryShutdown();
  // OTLP traces when OTEL_EXPORTER_OTLP_ENDPOINT is set; nothing otherwise.
  const stopTracing = await startTracing('dataagent-gateway');
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(settings, stopTracing), { bufferLogs: true, bodyParser: false });
  const logger = app.get(GatewayLogger);
  app.useLogger(logger);
  // A failure nobody awaited (a Redis error reply, a client gone mid-write) must not take every
  // connection of this gateway down with it.
  process.on('unhandledRejection', (err) => logger.pino.error({ err }, 'unhandled rejection'));
  // First of all: every request is counted, and /metrics answers outside the API's checks.
  const metrics = app.get(Metrics);
  // In a cluster, /metrics covers every process of the host; the queue's counts (the same from any process) once.
  const queue = app.get(RunQueue);
  const clusterMetrics = inCluster && settings.metrics.enabled ? new ClusterMetricsClient(metrics, () => queueMetrics(queue.queue)) : null;
  instrumentHttp(app, metrics, settings.metrics, clusterMetrics ? () => clusterMetrics.scrape() : undefined);
  // The figure KEDA scales the workers on, beside /metrics and under the same token.
  serveQueueDepth(app, settings.metrics);
  app.useBodyParser('json', { limit: Math.max(1024 * 1024, server.maxMessageBytes * 2) });
  // Validation walks bodies recursively: bound their depth and drop prototype keys first.
  app.use((req: Request, res: Response, next: NextFunction) => {
    try {
      if (req.body !== undefined) req.body = plainJson(req.body);
      next();
    } catch (err) {
      const error = err as ApiError;
      res.status(error.status).json(error.toBody());
    }
  });
  const origins = app.get(OriginPolicy);
  // Before CORS and routing: a page from a foreign origin (or a rebound DNS name) gets nothing.
  app.use((req: Request, res: Response, next: NextFunction) => {
    // Probes come from the node (Host: the pod's IP), not from a browser.
    if (HEALTH_PATH.test(req.path)) return next();
    try {
      origins.check(req.headers);
      next();
    } catch (err) {
      const error = err as ApiError;
      res.status(error.status).json(error.toBody());
    }
  });
  app.enableCors(origins.corsOptions());
  // The demo UI at `/`, behind the same Host/Origin check as the API.
  serveWebUi(app);
  // The OpenAI-compatible API lives where OpenAI clients look for it: /v1; the A2A agent card where A2A clients do.
  app.setGlobalPrefix(API_PREFIX, {
    exclude: [
      { path: 'v1/models', method: RequestMethod.GET },
      { path: 'v1/models/:id', method: RequestMethod.GET },
      { path: 'v1/chat/completions', method: RequestMethod.POST },
      { path: 'v1/responses', method: RequestMethod.POST },
      { path: 'v1/responses/:id', method: RequestMethod.GET },
      { path: 'v1/responses/:id/cancel', method: RequestMethod.POST },
      { path: AGENT_CARD_PATH, method: RequestMethod.GET },
    ],
  });
  serveApiDocs(app, version);
  if (settings.server.bullBoard) serveQueueBoard(app, settings.tenancy.multiTenant);
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, transform: true, exceptionFactory: validationError }));
  app.useGlobalFilters(new ApiExceptionFilter());
  app.useWebSocketAdapter(new ConfiguredIoAdapter(app, settings, origins));
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  await app.init();
  // Nest answers unknown routes under the prefix; everything else gets the same JSON error.
  app.use((req: Request, res: Response) => {
    // Under /v1 the clients are OpenAI's: they read OpenAI's error shape, and /api/v1 is no hint for them.
    if (req.path === '/v1' || req.path.startsWith('/v1/')) {
      res.status(404).json(openAiErrorBody(new ApiError(404, 'not_found', `Cannot ${req.method} ${req.path}: the OpenAI-compatible API offers GET /v1/models, GET /v1/models/{id}, POST /v1/chat/completions and the Responses API (/v1/responses)`)));
      return;
    }
    res.status(404).json({ error_code: 'not_found', message: `Cannot ${req.method} ${req.path}: the API is under /api/v1`, details: {} });
  });
  // The last wall before the descriptor table, past the stream caps (StreamQuota): beyond it new
  // connections are closed at once, and Redis, MariaDB and the logs keep descriptors to work with.
  const openFiles = openFilesLimit();
  if (openFiles !== null) (app.getHttpServer() as Server).maxConnections = Math.max(1, openFiles - DESCRIPTOR_RESERVE / 2);
  await app.listen(server.port, server.host);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : server.port;
  // Unset, browsers and authorization servers reach the gateway where it listens (MCP sign-in redirects).
  server.publicUrl ??= gatewayUrl(server.host, port);
  // One machine-readable line so scripts and tests can find the port (DATAAGENT_PORT=0 picks a free one).
  // In a cluster the primary prints it once every process listens; each process names itself.
  const line = inCluster ? { msg: 'gateway process listening', pid: process.pid } : { msg: 'gateway listening' };
  console.log(JSON.stringify({ ...line, url: gatewayUrl(server.host, port), port }));
}

main().catch((err) => {
  console.error('gateway failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
