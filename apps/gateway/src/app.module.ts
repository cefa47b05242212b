import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AgentsController } from './agents/agents.controller.js';
import { ApiKeyGuard } from './auth/api-key.guard.js';
import { AuthModule } from './auth/auth.module.js';
import { AdminModule } from './admin/admin.module.js';
import { A2aModule } from './dialects/a2a/a2a.module.js';
import { AgUiModule } from './dialects/ag-ui/ag-ui.module.js';
import { AiSdkUiModule } from './dialects/ai-sdk-ui/ai-sdk-ui.module.js';
import { NativeDialectModule } from './dialects/native/native-dialect.module.js';
import { OpenAiChatModule } from './dialects/openai-chat/openai-chat.module.js';
import { OpenAiResponsesModule } from './dialects/openai-responses/openai-responses.module.js';
import { HealthController } from './health/health.controller.js';
import type { GatewaySettings } from './infra/gateway-config.js';
import { InfraModule } from './infra/infra.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { McpModule } from './mcp/mcp.module.js';
import { RunsModule } from './runs/runs.module.js';
import { UsageModule } from './usage/usage.module.js';
import { SessionCleanup } from './sessions/session-cleanup.service.js';
import { SessionsController } from './sessions/sessions.controller.js';
import { MemoryController } from './users/memory.controller.js';
import { MeController } from './users/me.controller.js';

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
        RunsModule,
        // Each dialect is a module of its own over the runs seam.
        NativeDialectModule,
        OpenAiChatModule,
        OpenAiResponsesModule,
        AiSdkUiModule,
        AgUiModule,
        A2aModule,
      ],
      controllers: [SessionsController, AgentsController, HealthController, MemoryController, MeController],
      providers: [{ provide: APP_GUARD, useClass: ApiKeyGuard }, SessionCleanup],
    };
  }
}
