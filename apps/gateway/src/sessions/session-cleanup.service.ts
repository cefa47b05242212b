import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { ConversationStore } from '#core/session/session-store.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { SETTINGS, STORE } from '../infra/tokens.js';
import { McpReleases } from '../mcp/mcp-releases.service.js';

/**
 * Deletes sessions idle for longer than DATAAGENT_SESSION_TIMEOUT, and those of stateless
 * OpenAI-compatible calls idle for longer than DATAAGENT_OPENAI_SESSION_TTL.
 */
@Injectable()
export class SessionCleanup implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('session-cleanup');
  private timer?: NodeJS.Timeout;

  constructor(
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
    @Inject(STORE) private readonly store: ConversationStore,
    private readonly mcpReleases: McpReleases,
  ) {}

  onModuleInit(): void {
    const { sessionTimeoutSeconds, openAiSessionTtlSeconds } = this.settings.server;
    const timeout = Math.min(sessionTimeoutSeconds, openAiSessionTtlSeconds);
    const everyMs = Math.min(60_000, Math.max(1_000, (timeout * 1000) / 10));
    this.timer = setInterval(() => void this.sweep(), everyMs);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  async sweep(): Promise<number> {
    try {
      const { sessionTimeoutSeconds, openAiSessionTtlSeconds } = this.settings.server;
      const { removed, owners } = await this.store.sessions.cleanupExpired(sessionTimeoutSeconds, openAiSessionTtlSeconds);
      if (removed > 0) this.logger.log(`removed ${removed} expired sessions`);
      // Users left without a session no longer need their MCP connections on the workers.
      await this.mcpReleases.sessionsEnded(owners);
      return removed;
    } catch (err) {
      this.logger.warn(`session cleanup failed: ${err instanceof Error ? err.message : err}`);
      return 0;
    }
  }
}
