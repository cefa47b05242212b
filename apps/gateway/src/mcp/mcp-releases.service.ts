import { Inject, Injectable, Logger } from '@nestjs/common';
import type { RedisClient } from '#transport/redis-connection.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { announceMcpRelease, type McpReleaseMessage } from '#transport/mcp-release.js';
import { REDIS, STORE } from '../infra/tokens.js';

/**
 * Tells workers when MCP connections are no longer wanted: a user's last session ended (deleted
 * or expired), or one of their servers changed. Best effort: a worker that misses a change finds
 * the user's config version moved within seconds and lets go then; one that misses the end of
 * their sessions closes the connection once idle (DATAAGENT_MCP_IDLE_SECONDS).
 */
@Injectable()
export class McpReleases {
  private readonly logger = new Logger('mcp-releases');

  constructor(
    @Inject(STORE) private readonly store: ConversationStore,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  /** For each of these users who has no session left, workers close all their MCP connections. */
  async sessionsEnded(owners: ReadonlyArray<{ tenantId: string; userId: string }>): Promise<void> {
    try {
      const ended: McpReleaseMessage[] = [];
      for (const { tenantId, userId } of owners) {
        const left = await this.store.sessions.listByUser(tenantId, userId, { limit: 1, offset: 0 });
        if (left.length === 0) ended.push({ tenant_id: tenantId, user_id: userId, reason: 'sessions_ended' });
      }
      await announceMcpRelease(this.redis, ended);
    } catch (err) {
      this.logger.warn(`could not tell workers to close MCP connections: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Workers close the user's connection to this server; the next run connects with the new config. */
  async serverChanged(tenantId: string, userId: string, serverName: string, reason: 'config_changed' | 'signed_in' | 'signed_out' = 'config_changed'): Promise<void> {
    await announceMcpRelease(this.redis, [{ tenant_id: tenantId, user_id: userId, server_name: serverName, reason }]).catch((err: unknown) => {
      this.logger.warn(`could not tell workers to close MCP connections: ${err instanceof Error ? err.message : String(err)}`);
    });
  }
}
