import type { RedisClient } from './redis-connection.js';
import { RedisChannelListener } from './redis-channel.js';
import { redisKeys } from './redis-keys.js';

/** Messages from gateways to whichever worker holds a run. */
export type ControlMessage =
  /** `requested_at`: when the gateway took the cancel (epoch ms), for the cancel latency. */
  | { type: 'cancel'; run_id: string; requested_at?: number }
  | { type: 'hitl_decision'; request_id: string; run_id: string }
  | { type: 'elicitation_answer'; request_id: string; run_id: string };

/**
 * Pub/sub for control messages. Delivery is at most once, so every message is also
 * recorded durably by its sender (cancel key, HITL request record) and receivers check
 * those records too.
 */
export class ControlBus {
  private readonly channel?: RedisChannelListener<ControlMessage>;

  constructor(private readonly publisher: RedisClient, subscriber?: RedisClient) {
    if (subscriber) this.channel = new RedisChannelListener(subscriber, { guard: controlMessage });
  }

  async publish(message: ControlMessage): Promise<void> {
    await this.publisher.publish(redisKeys.controlChannel, JSON.stringify(message));
  }

  /** Starts receiving control messages (needs the subscriber connection). */
  async listen(handler: (message: ControlMessage) => void): Promise<() => void> {
    if (!this.channel) throw new Error('ControlBus needs a subscriber connection to listen');
    return this.channel.listen(redisKeys.controlChannel, handler);
  }
}

/** Checks what receivers act on: a cancel's run, a decision's or an answer's request. */
function controlMessage(value: unknown): ControlMessage | null {
  const m = value as Partial<Record<string, unknown>> | null;
  if (m?.type === 'cancel') return typeof m.run_id === 'string' ? (m as ControlMessage) : null;
  if (m?.type === 'hitl_decision' || m?.type === 'elicitation_answer') return typeof m.request_id === 'string' ? (m as ControlMessage) : null;
  return null;
}
