import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HealthServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Whether the worker takes runs now (false while it starts, drains or has lost Redis). */
  ready: () => Promise<boolean>;
}

/**
 * The worker's probes on a port of their own: `GET /health/live` answers 200 while the process
 * serves HTTP at all; `GET /health/ready` 200 while it takes runs, 503 otherwise. A draining
 * worker is live and not ready, so Kubernetes waits for its drain instead of restarting it.
 * The server is not closed at shutdown: the probes answer through the drain until the process exits.
 * @returns the port it listens on.
 * @throws Error when the port cannot be bound.
 */
export async function serveHealth(options: HealthServerOptions): Promise<number> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://health').pathname;
    const reply = (status: number, body: Record<string, string>) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, { error_code: 'method_not_allowed', message: 'probes answer GET' });
    if (path === '/health/live') return reply(200, { status: 'ok' });
    if (path !== '/health/ready') return reply(404, { error_code: 'not_found', message: 'probes are at /health/live and /health/ready' });
    options.ready().then(
      (ready) => reply(ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready' }),
      () => reply(503, { status: 'not_ready' }),
    );
  });
  server.listen(options.port, options.host);
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}
