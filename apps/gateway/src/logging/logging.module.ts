import { randomUUID } from 'node:crypto';
import { Inject, type DynamicModule, type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { DestinationStream } from 'pino';
import { pinoHttp, type HttpLogger } from 'pino-http';
import { HEALTH_PATH } from '../health/health.controller.js';
import { GatewayLogger, requestLog } from './gateway-logger.js';
import { withoutUrlSecrets } from '../auth/stream-tickets.service.js';

const HTTP_LOG = Symbol('HTTP_LOG');

/** A client's own `X-Request-Id`, when it is one we can log and echo safely. */
const CLIENT_REQUEST_ID = /^[\w.-]{1,128}$/;

export interface LoggingOptions {
  /** pino's level name (`DATAAGENT_LOG_LEVEL`). */
  level: string;
  /** Where the JSON lines go; standard output unless given (tests read them from a stream). */
  destination?: DestinationStream;
}

/**
 * The gateway's logs, on pino: one access line per request (method, path, status, time), an
 * `X-Request-Id` on every answer, and the request's id on every line logged while it is handled.
 * Provides {@link GatewayLogger} for `app.useLogger`.
 */
@Module({})
export class LoggingModule implements NestModule {
  constructor(@Inject(HTTP_LOG) private readonly httpLog: HttpLogger<Request, Response>) {}

  static forRoot(options: LoggingOptions): DynamicModule {
    const httpLog = pinoHttp<Request, Response>(
      {
        level: options.level,
        base: { service: 'gateway', pid: process.pid },
        genReqId: (req, res) => {
          const given = req.headers['x-request-id'];
          const id = typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
          res.setHeader('X-Request-Id', id);
          return id;
        },
        customProps: (req) => ({ request_id: req.id }),
        // A request's lines name it (method, path, remote address), never its headers: no API key,
        // token or cookie can reach a log, and nothing needs redacting (which cost the most of
        // pino-http's time per request).
        serializers: {
          req: (req: { id?: unknown; method?: string; url?: string; remoteAddress?: string }) => ({ id: req.id, method: req.method, url: withoutUrlSecrets(req.url), remoteAddress: req.remoteAddress }),
          res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
        },
        // Probes every few seconds would drown the request log.
        autoLogging: { ignore: (req) => HEALTH_PATH.test(req.originalUrl) },
      },
      options.destination,
    );
    return {
      module: LoggingModule,
      providers: [
        { provide: HTTP_LOG, useValue: httpLog },
        { provide: GatewayLogger, useValue: new GatewayLogger(httpLog.logger) },
      ],
      exports: [GatewayLogger],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    const { httpLog } = this;
    // `{/*splat}` covers the global prefix itself, what lies under it, and the paths kept out of it
    // (the OpenAI-compatible `/v1/…`).
    consumer
      .apply((req: Request, res: Response, next: NextFunction) => httpLog(req, res, () => requestLog.run(req.log, next)))
      .forRoutes({ path: '{/*splat}', method: RequestMethod.ALL });
  }
}
