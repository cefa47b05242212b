import { performance } from 'node:perf_hooks';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Application, NextFunction, Request, RequestHandler, Response } from 'express';
import type { MetricsConfig } from '#core/config/settings.js';
import { scrapeAllowed, type Metrics } from '#telemetry/metrics.js';

/** Where Prometheus looks by default. */
export const METRICS_PATH = '/metrics';

/**
 * The route template Express matched (`/api/v1/sessions/:sessionId`), never the path itself
 * (which carries ids); `unmatched` for a request no route took (a 404, a refused Host).
 */
export function routeLabel(req: Pick<Request, 'baseUrl'> & { route?: { path?: unknown } }): string {
  const path = req.route?.path;
  return typeof path === 'string' ? `${req.baseUrl ?? ''}${path}` : 'unmatched';
}

/**
 * Counts and times every HTTP request by route template, method and status, and serves
 * `GET /metrics` at the root, where Prometheus looks. Registered before everything else, so
 * refused requests are counted too, and the scrape needs neither an API key nor a browser's
 * Host and Origin (a scraper sends none): anyone who reaches the gateway may read it unless
 * DATAAGENT_METRICS_TOKEN is set, so keep the path off public ingress.
 * @param scrape What `/metrics` answers: this process's metrics, or (in a gateway cluster) every process's, summed.
 */
export function instrumentHttp(app: NestExpressApplication, metrics: Metrics, config: MetricsConfig, scrape: () => Promise<string> = () => metrics.scrape()): void {
  const http = app.getHttpAdapter().getInstance() as Application;
  http.use((req: Request, res: Response, next: NextFunction) => {
    const started = performance.now();
    // `close` also comes for a client that left mid-answer (an SSE stream ends that way).
    res.once('close', () => {
      const labels = [routeLabel(req), req.method, String(res.statusCode)] as const;
      metrics.httpRequests.labels(...labels).inc();
      metrics.httpDuration.labels(...labels).observe((performance.now() - started) / 1000);
    });
    next();
  });
  if (!config.enabled) return;
  http.get(METRICS_PATH, scrapeGuard(config), (_req: Request, res: Response) => {
    scrape().then(
      (text) => res.type(metrics.contentType).send(text),
      // A gateway process that did not report in time: no partial sum, which would read as counters resetting.
      (err: unknown) => res.status(503).json({ error_code: 'metrics_unavailable', message: err instanceof Error ? err.message : String(err), details: {} }),
    );
  });
}

/** Answers 401 unless the request may read the metrics (`Authorization: Bearer` DATAAGENT_METRICS_TOKEN, when set). */
export function scrapeGuard(config: MetricsConfig): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (scrapeAllowed(req.headers.authorization, config.token)) return next();
    res.status(401).set('WWW-Authenticate', 'Bearer').json({ error_code: 'unauthorized', message: 'A bearer token is required to read the metrics (DATAAGENT_METRICS_TOKEN)', details: {} });
  };
}
