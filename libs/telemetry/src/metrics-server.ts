import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { scrapeAllowed, type Metrics } from './metrics.js';

export interface MetricsServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** When set, a scrape needs `Authorization: Bearer <token>`. */
  token?: string;
}

export interface MetricsServer {
  /** Where it listens, with a loopback address in place of a wildcard one. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * A small HTTP server that answers `GET /metrics` with the process's metrics, for processes
 * that serve no HTTP of their own (the workers).
 * @throws Error when the port cannot be bound (in use, not permitted).
 */
export async function serveMetrics(metrics: Metrics, options: MetricsServerOptions): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://metrics').pathname;
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found: metrics are at GET /metrics\n');
      return;
    }
    if (!scrapeAllowed(req.headers.authorization, options.token)) {
      res.writeHead(401, { 'Content-Type': 'text/plain; charset=utf-8', 'WWW-Authenticate': 'Bearer' }).end('a bearer token is required (DATAAGENT_METRICS_TOKEN)\n');
      return;
    }
    metrics.scrape().then(
      (text) => res.writeHead(200, { 'Content-Type': metrics.contentType }).end(req.method === 'HEAD' ? undefined : text),
      () => res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('metrics could not be collected\n'),
    );
  });
  // Scrapes are short; a connection kept open would only hold the process at shutdown.
  server.keepAliveTimeout = 1_000;
  server.listen(options.port, options.host);
  // Rejects with the server's error (EADDRINUSE, EACCES) when it cannot listen.
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const shown = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  return {
    url: `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}/metrics`,
    port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
