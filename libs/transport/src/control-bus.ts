import type { Redis } from 'ioredis';
import { redisKeys } from './redis-keys.js';

/** Messages from gateways to whichever worker holds a run. */
export type ControlMessage =
  /** `requested_at`: when the gateway took the cancel (epoch ms), for the cancel latency. */
  | { type: 'cancel'; run_id: string; requested_at?: number }
  | { type: 'hitl_decision'; request_id: string; run_id: string };

/**
 * Pub/sub for control messages. Delivery is at most once, so every message is also
 * recorded durably by its sender (cancel key, HITL request record) and receivers check
 * those records too.
 */
export class ControlBus {
  private readonly handlers = new Set<(message: ControlMessage) => void>();
  private subscribed?: Promise<unknown>;

  constructor(private readonly publisher: Redis, private readonly subscriber?: Redis) {}

  async publish(message: ControlMessage): Promise<void> {
    await this.publisher.publish(redisKeys.controlChannel, JSON.stringify(message));
  }

  /** Starts receiving control messages (needs the subscriber connection). */
  async listen(handler: (message: ControlMessage) => void): Promise<() => void> {
    if (!this.subscriber) throw new Error('ControlBus needs a subscriber connection to listen');
    if (!this.subscribed) {
      this.subscriber.on('message', (channel: string, raw: string) => {
        if (channel !== redisKeys.controlChannel) return;
        let message: ControlMessage;
        try {
          message = JSON.parse(raw) as ControlMessage;
        } catch {
          return;
        }
        for (const h of this.handlers) h(message);
      });
      this.subscribed = this.subscriber.subscribe(redisKeys.controlChannel);
    }
    this.handlers.add(handler);
    await this.subscribed;
    return () => this.handlers.delete(handler);
  }
}
