import type { Redis } from 'ioredis';
import { redisKeys } from './redis-keys.js';

/** A user's MCP servers changed (REST); the change applies from their next run. */
export interface McpConfigChangedEvent {
  event_type: 'mcp_config_changed';
  server_name: string;
  change: 'created' | 'updated' | 'deleted';
  timestamp: string;
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
  private readonly handlers = new Set<(message: UserEventMessage) => void>();
  private subscribed?: Promise<unknown>;

  constructor(private readonly publisher: Redis, private readonly subscriber?: Redis) {}

  async publish(message: UserEventMessage): Promise<void> {
    await this.publisher.publish(redisKeys.userEventsChannel, JSON.stringify(message));
  }

  /**
   * Starts receiving user events (needs the subscriber connection). Resolves once subscribed.
   * @returns a function that stops this handler.
   */
  async listen(handler: (message: UserEventMessage) => void): Promise<() => void> {
    if (!this.subscriber) throw new Error('UserEventBus needs a subscriber connection to listen');
    if (!this.subscribed) {
      this.subscriber.on('message', (channel: string, raw: string) => {
        if (channel !== redisKeys.userEventsChannel) return;
        const message = parseMessage(raw);
        if (message) for (const h of this.handlers) h(message);
      });
      this.subscribed = this.subscriber.subscribe(redisKeys.userEventsChannel);
    }
    this.handlers.add(handler);
    await this.subscribed;
    return () => this.handlers.delete(handler);
  }
}

function parseMessage(raw: string): UserEventMessage | null {
  try {
    const m = JSON.parse(raw) as Partial<UserEventMessage>;
    const ok = typeof m.tenant_id === 'string' && typeof m.user_id === 'string' && typeof m.event?.event_type === 'string';
    return ok ? (m as UserEventMessage) : null;
  } catch {
    return null;
  }
}
