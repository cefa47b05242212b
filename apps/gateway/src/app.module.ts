import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { A2aController } from './dialects/a2a/a2a.controller.js';
import { AgentCardController } from './dialects/a2a/agent-card.controller.js';
import { AgentsController } from './agents/agents.controller.js';
import { ApiKeyGuard } from './auth/api-key.guard.js';
import { AuthModule } from './auth/auth.module.js';
import { AdminModule } from './admin/admin.module.js';
import { ChatController } from './dialects/native/chat.controller.js';
import { ChatSocketGateway } from './dialects/native/chat.gateway.js';
import { RunsService } from './runs/runs.service.js';
import { EventStreamController } from './dialects/native/event-stream.controller.js';
import { UserSockets } from './dialects/native/user-sockets.js';
import { WsChatServer } from './dialects/native/ws-chat.server.js';
import { ControlService } from './runs/run-control.service.js';
import { ElicitationController } from './dialects/native/elicitation.controller.js';
import { HitlController } from './dialects/native/hitl.controller.js';
import { ParkedRunExpiryService } from './runs/parked-run-expiry.service.js';
import { HealthController } from './health/health.controller.js';
import type { GatewaySettings } from './infra/gateway-config.js';
import { InfraModule } from './infra/infra.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { McpModule } from './mcp/mcp.module.js';
import { UsageModule } from './usage/usage.module.js';
import { SessionAccess } from './sessions/session-access.service.js';
import { SessionCleanup } from './sessions/session-cleanup.service.js';
import { SessionsController } from './sessions/sessions.controller.js';
import { MemoryController } from './users/memory.controller.js';
import { MeController } from './users/me.controller.js';
import { OpenAiCompatController } from './dialects/openai-chat/openai-compat.controller.js';
import { ResponsesController } from './dialects/openai-responses/responses.controller.js';
import { UiChatController } from './dialects/ai-sdk-ui/ui-chat.controller.js';
import { AgUiController } from './dialects/ag-ui/ag-ui.controller.js';

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
        UsageModule,
        LoggingModule.forRoot({ level: settings.log.level }),
      ],
      controllers: [
        ChatController,
        EventStreamController,
        HitlController,
        ElicitationController,
        SessionsController,
        AgentsController,
        HealthController,
        MemoryController,
        MeController,
        OpenAiCompatController,
        ResponsesController,
        UiChatController,
        A2aController,
        AgentCardController,
        AgUiController,
      ],
      providers: [
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        SessionAccess,
        SessionCleanup,
        RunsService,
        ControlService,
        ParkedRunExpiryService,
        UserSockets,
        ChatSocketGateway,
        WsChatServer,
      ],
    };
  }
}
