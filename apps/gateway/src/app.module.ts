import { randomUUID } from 'node:crypto';
import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import { AgentsController } from './agents/agents.controller.js';
import { ApiKeyGuard } from './auth/api-key.guard.js';
import { AuthModule } from './auth/auth.module.js';
import { AdminModule } from './admin/admin.module.js';
import { ChatController } from './chat/chat.controller.js';
import { ChatSocketGateway } from './chat/chat.gateway.js';
import { ChatService } from './chat/chat.service.js';
import { EventStreamController } from './chat/event-stream.controller.js';
import { UserSockets } from './chat/user-sockets.js';
import { WsChatServer } from './chat/ws-chat.server.js';
import { ControlService } from './control/control.service.js';
import { HitlController } from './control/hitl.controller.js';
import { HEALTH_PATH, HealthController } from './health/health.controller.js';
import type { GatewaySettings } from './infra/gateway-config.js';
import { InfraModule } from './infra/infra.module.js';
import { McpModule } from './mcp/mcp.module.js';
import { SessionAccess } from './sessions/session-access.service.js';
import { SessionCleanup } from './sessions/session-cleanup.service.js';
import { SessionsController } from './sessions/sessions.controller.js';
import { MemoryController } from './users/memory.controller.js';
import { MeController } from './users/me.controller.js';
import { OpenAiCompatController } from './openai-compat/openai-compat.controller.js';
import { withoutUrlSecrets } from './auth/stream-tickets.service.js';

@Module({})
export class AppModule {
  /** @param stopTracing Flushes and stops the trace exporter at shutdown; null when tracing is off. */
  static forRoot(settings: GatewaySettings, stopTracing: (() => Promise<void>) | null = null): DynamicModule {
    return {
      module: AppModule,
      imports: [
        InfraModule.forRoot(settings, stopTracing),
        AuthModule,
        McpModule,
        AdminModule,
        LoggerModule.forRoot({
          pinoHttp: {
            level: settings.log.level,
            base: { service: 'gateway', pid: process.pid },
            genReqId: (req, res) => {
              const given = req.headers['x-request-id'];
              const id = typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
              res.setHeader('X-Request-Id', id);
              return id;
            },
            customProps: (req) => ({ request_id: req.id }),
            // A request's lines name it (method, path, remote address), never its headers: no API key,
            // token or cookie can reach a log, and nothing else needs redacting (which cost the most
            // of pino-http's time per request) but the URL's stream ticket or WebSocket api_key.
            serializers: {
              req: (req: { id?: unknown; method?: string; url?: string; remoteAddress?: string }) => ({ id: req.id, method: req.method, url: withoutUrlSecrets(req.url), remoteAddress: req.remoteAddress }),
              res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
            },
            // Probes every few seconds would drown the request log.
            autoLogging: { ignore: (req) => HEALTH_PATH.test(req.url ?? '') },
          },
        }),
      ],
      controllers: [ChatController, EventStreamController, HitlController, SessionsController, AgentsController, HealthController, MemoryController, MeController, OpenAiCompatController],
      providers: [
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        SessionAccess,
        SessionCleanup,
        ChatService,
        ControlService,
        UserSockets,
        ChatSocketGateway,
        WsChatServer,
      ],
    };
  }
}
