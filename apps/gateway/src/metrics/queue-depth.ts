import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Application, NextFunction, Request, Response } from 'express';
import type { MetricsConfig } from '#core/config/settings.js';
import { RunQueue } from '#transport/run-queue.js';
import { toApiError } from '../common/api-exception.filter.js';
import { scrapeGuard } from './http-metrics.js';

/** Where KEDA's metrics-api trigger reads the worker autoscaling figure (k8s/worker-scaledobject.yaml). */
export const QUEUE_DEPTH_PATH = '/metrics/queue';

/**
 * Serves `GET /metrics/queue`: the run queue's depth as JSON, `{queue, waiting, prioritized,
 * delayed, active, pending}`, where `pending` (every run that needs a worker slot now or soon)
 * is the figure the workers scale on. Every gateway reads the same queue, so any replica
 * behind the Service gives the same answer. It sits beside `/metrics`, outside the API: no API
 * key, no Host check (KEDA calls the Service's cluster name), the same bearer token when
 * DATAAGENT_METRICS_TOKEN is set, and off with the metrics. Redis out of reach: 503, and the
 * autoscaler keeps the replica count it has.
 */
export function serveQueueDepth(app: NestExpressApplication, config: MetricsConfig): void {
  if (!config.enabled) return;
  const queue = app.get(RunQueue);
  const http = app.getHttpAdapter().getInstance() as Application;
  http.get(QUEUE_DEPTH_PATH, scrapeGuard(config), (_req: Request, res: Response, next: NextFunction) => {
    queue
      .depth()
      .then((depth) => res.set('Cache-Control', 'no-store').json({ queue: queue.queue.name, ...depth }))
      .catch((err: unknown) => {
        const error = toApiError(err);
        if (error.status === 500) return next(err);
        res.status(error.status).set(error.headers).json(error.toBody());
      });
  });
}
