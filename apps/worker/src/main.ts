import 'reflect-metadata';
import { hostname } from 'node:os';
import { NestFactory } from '@nestjs/core';
import { pino } from 'pino';
import { ConfigError } from '#core/config/env.js';
import { chooseSandbox } from '#core/sandbox/sandbox-setup.js';
import { closeInheritedDescriptors } from '#core/sandbox/inherited-descriptors.js';
import { startTracing } from '#telemetry/tracing.js';
import { serveHealth } from './health/health-server.js';
import { loadWorkerSettings } from './infra/worker-config.js';
import { RunProcessor } from './runs/run.processor.js';
import { WorkerModule } from './worker.module.js';

async function main(): Promise<void> {
  // Before anything is spawned: a descriptor inherited from whatever started the worker would
  // otherwise be open in every sandboxed command and server (only 0-2 are theirs).
  const inherited = closeInheritedDescriptors();
  let settings;
  try {
    settings = loadWorkerSettings();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  settings.worker.workerId ??= `${hostname()}-${process.pid}`;
  const logger = pino({ level: settings.log.level, base: { service: 'worker', worker_id: settings.worker.workerId } });
  // A Redis error reply nobody awaited (OOM, READONLY) must not end every run on this worker.
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));
  if (inherited.length > 0) logger.info({ descriptors: inherited }, 'closed descriptors inherited from the starting process');
  // Checked before anything starts: a worker that would run users' processes unconfined says so now.
  const sandbox = await chooseSandbox(settings.sandbox);
  if (sandbox.sandbox.kind === 'bwrap') logger.info({ bounds: sandbox.bounds }, 'users\' processes run in bubblewrap');
  if (sandbox.sandbox.kind === 'none') {
    if (settings.tenancy.multiTenant && settings.tools.shellEnabled) {
      console.error(`DATAAGENT_SHELL_ENABLED=true in multi-tenant mode needs the sandbox, and this worker has none: ${sandbox.reason}`);
      process.exit(2);
    }
    logger.warn(
      { reason: sandbox.reason },
      settings.tenancy.multiTenant
        ? "no sandbox: users' stdio MCP servers and skill scripts are refused in multi-tenant mode"
        : 'no sandbox: shell commands, skill scripts and stdio MCP servers run as the worker\'s own OS user and can read what it can',
    );
  }
  // OTLP traces when OTEL_EXPORTER_OTLP_ENDPOINT is set; nothing otherwise.
  const stopTracing = await startTracing('dataagent-worker');
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(settings, logger, stopTracing, sandbox), { logger: ['error', 'warn'] });
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  if (settings.worker.healthPort !== undefined) {
    const processor = app.get(RunProcessor);
    const port = await serveHealth({ host: '0.0.0.0', port: settings.worker.healthPort, ready: () => processor.ready() });
    // One machine-readable line, whatever the log level, so scripts and tests find the port (0 picks a free one).
    console.log(JSON.stringify({ msg: 'worker health listening', port }));
  }
  logger.info('worker ready');
}

main().catch((err) => {
  console.error('worker failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
