import type { RedisClient } from './redis-connection.js';
import { RedisChannelListener } from './redis-channel.js';
import { redisKeys } from './redis-keys.js';

/**
 * A user's MCP servers changed (REST), or their sign-in to one did, or a worker found one waiting
 * for them to sign in (`needs_authorization`); a change applies from their next run.
 */
export interface McpConfigChangedEvent {
  event_type: 'mcp_config_changed';
  server_name: string;
  change: 'created' | 'updated' | 'deleted' | 'signed_in' | 'signed_out' | 'needs_authorization';
  timestamp: string;
  /** With `needs_authorization`: opens the sign-in in the person's browser (added by the gateway, per socket). */
  authorize_url?: string;
}

/** Events about a user rather than a run: every gateway sends them to that user's open sockets. */
export type UserEvent = McpConfigChangedEvent;

/** The JSON published on {@link redisKeys.userEventsChannel}. */
export interface UserEventMessage {
  tenant_id: string;
  user_id: string;
  event: UserEvent;
}

/** Pub/sub of user events between gateways; delivery is at most once, to sockets open at the time. */
export class UserEventBus {
  private readonly channel?: RedisChannelListener<UserEventMessage>;

  constructor(private readonly publisher: RedisClient, subscriber?: RedisClient) {
    if (subscriber) this.channel = new RedisChannelListener(subscriber, { guard: userEventMessage });
  }

  async publish(message: UserEventMessage): Promise<void> {
    await this.publisher.publish(redisKeys.userEventsChannel, JSON.stringify(message));
  }

  /**
   * Starts receiving user events (needs the subscriber connection). Resolves once subscribed.
   * @returns a function that stops this handler.
   */
  async listen(handler: (message: UserEventMessage) => void): Promise<() => void> {
    if (!this.channel) throw new Error('UserEventBus needs a subscriber connection to listen');
    return this.channel.listen(redisKeys.userEventsChannel, handler);
  }
}

function userEventMessage(value: unknown): UserEventMessage | null {
  const m = value as Partial<UserEventMessage> | null;
  const ok = typeof m?.tenant_id === 'string' && typeof m.user_id === 'string' && typeof m.event?.event_type === 'string';
  return ok ? (m as UserEventMessage) : null;
}
