import { Injectable, Logger, type OnApplicationBootstrap, Optional } from '@nestjs/common';
import type { Caller } from '#core/auth/caller.js';
import { UserEventBus, type UserEvent, type UserEventMessage } from '#transport/user-event-bus.js';
import { McpSignIns } from '../../mcp/mcp-sign-ins.service.js';

/** A user event as a socket receives it: shaped like a run's events, outside any run (seq 0). */
export type UserSocketEvent = UserEvent & { session_id: ''; run_id: ''; seq: 0 };

type Send = (event: UserSocketEvent) => void;

/** How long a connecting socket waits for this gateway's subscription to user events. */
const READY_WAIT_MS = 2_000;

/**
 * This gateway's open sockets by user, and the relay of user events (`mcp_config_changed`) from
 * any gateway to them. Socket.IO and plain WebSocket connections register on connect.
 */
@Injectable()
export class UserSockets implements OnApplicationBootstrap {
  private readonly logger = new Logger('user-events');
  private readonly sockets = new Map<string, Set<{ caller: Caller; send: Send }>>();
  private subscribed: Promise<unknown> = new Promise(() => undefined);

  constructor(
    private readonly bus: UserEventBus,
    @Optional() private readonly signIns?: McpSignIns,
  ) {}

  onApplicationBootstrap(): void {
    // Not awaited: a gateway starts while Redis is down, and subscribes once it is back.
    this.subscribed = this.bus.listen((message) => this.deliver(message)).catch((err: unknown) => {
      this.logger.error(`cannot receive user events: ${err instanceof Error ? err.message : String(err)}`);
    });
  }

  /**
   * Resolves once events published from now on reach this gateway (at most a short wait, so a
   * socket still connects while Redis is down).
   */
  async ready(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.subscribed, new Promise((resolve) => (timer = setTimeout(resolve, READY_WAIT_MS)))]);
    clearTimeout(timer);
  }

  /**
   * Sends the caller's user events to `send` until the returned function is called (on disconnect).
   */
  add(caller: Caller, send: Send): () => void {
    const key = userKey(caller.tenantId, caller.userId);
    const set = this.sockets.get(key) ?? new Set<{ caller: Caller; send: Send }>();
    const entry = { caller, send };
    set.add(entry);
    this.sockets.set(key, set);
    return () => {
      set.delete(entry);
      if (set.size === 0 && this.sockets.get(key) === set) this.sockets.delete(key);
    };
  }

  private deliver(message: UserEventMessage): void {
    const set = this.sockets.get(userKey(message.tenant_id, message.user_id));
    if (!set) return;
    const event: UserSocketEvent = { ...message.event, session_id: '', run_id: '', seq: 0 };
    for (const { caller, send } of set) {
      if (event.change !== 'needs_authorization' || !this.signIns) {
        send(event);
        continue;
      }
      // Each socket gets a sign-in link of its own (the ticket is bound to its caller).
      this.signIns.authorizeUrl(caller, message.user_id, event.server_name).then(
        ({ authorize_url }) => send({ ...event, authorize_url }),
        () => send(event),
      );
    }
  }
}

function userKey(tenantId: string, userId: string): string {
  return `${tenantId}\0${userId}`;
}
