import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Caller } from '#core/auth/caller.js';
import type { RedisClient } from '#transport/redis-connection.js';
import { StreamSlots, type StreamHolder } from '#transport/stream-slots.js';
import { ApiError } from '../common/api-error.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { openFilesLimit, streamCapacity } from '../infra/open-files.js';
import { REDIS, SETTINGS } from '../infra/tokens.js';
import { tooMany } from './quotas.service.js';

/** How long a slot outlives a gateway that stops renewing it (a crash): then it comes back. */
const LEASE_MS = 60_000;
/** When a refused client may try again: streams end at any time. */
const RETRY_AFTER_SECONDS = 5;

/** Gives a stream's slot back; calling it again does nothing. */
export type ReleaseStream = () => void;

/**
 * Streams held open (SSE, WebSocket, Socket.IO): per API key and per person on all gateways
 * together (StreamSlots in Redis), and per gateway process, so no key, no person and no crowd
 * can hold the process's file descriptors. Over a person's limit the answer is 429
 * `stream_limit`, over the gateway's 503 `gateway_full`, both with Retry-After. A stream gives
 * its slot back when it closes.
 */
@Injectable()
export class StreamQuota implements OnApplicationShutdown {
  private readonly slots: StreamSlots;
  private readonly open = new Map<string, StreamHolder>();
  /** This process's streams at most; null: no cap. */
  readonly capacity: number | null;
  private readonly gatewayId = randomUUID();
  private counter = 0;
  private renewal?: NodeJS.Timeout;

  constructor(
    @Inject(REDIS) redis: RedisClient,
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
  ) {
    this.slots = new StreamSlots(redis);
    this.capacity = streamCapacity(settings.server.maxStreamsPerGateway, openFilesLimit());
  }

  onApplicationShutdown(): void {
    clearInterval(this.renewal);
  }

  /** Streams this process holds open now. */
  get held(): number {
    return this.open.size;
  }

  /**
   * Takes a stream slot for the caller: call it before answering, so a refusal is an HTTP answer.
   * @returns the release, for when the stream closes
   * @throws ApiError 503 `gateway_full` at this process's cap, 429 `stream_limit` at the key's or the person's
   */
  async take(caller: Caller): Promise<ReleaseStream> {
    if (this.capacity !== null && this.open.size >= this.capacity) {
      throw new ApiError(503, 'gateway_full', 'This gateway holds as many streams as it may; retry shortly', { limit: 'streams_per_gateway', max: this.capacity }, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
    }
    const slot = `${this.gatewayId}:${++this.counter}`;
    const holder: StreamHolder = { tenantId: caller.tenantId, userId: caller.userId, keyId: caller.keyId ?? 'none' };
    const { maxStreamsPerKey: perKey, maxStreamsPerUser: perPerson } = this.settings.server;
    const counted = perKey > 0 || perPerson > 0;
    // Held here before Redis answers: a burst on this process cannot overshoot its cap meanwhile.
    this.open.set(slot, holder);
    try {
      const refused = counted ? await this.slots.take(holder, slot, { perKey, perPerson }, Date.now() + LEASE_MS) : null;
      if (refused === 'key') throw tooMany('stream_limit', `This API key holds ${perKey} streams open, its most; close one or retry in ${RETRY_AFTER_SECONDS} s`, 'streams_per_key', perKey, RETRY_AFTER_SECONDS);
      if (refused === 'person') throw tooMany('stream_limit', `You hold ${perPerson} streams open, your most; close one or retry in ${RETRY_AFTER_SECONDS} s`, 'streams_per_user', perPerson, RETRY_AFTER_SECONDS);
    } catch (err) {
      this.open.delete(slot);
      throw err;
    }
    if (counted) this.renewing();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open.delete(slot);
      // A release that fails (Redis away) comes back when its lease ends.
      if (counted) void this.slots.release(holder, slot).catch(() => undefined);
    };
  }

  /** Renews the leases of this process's open slots, a few times a lease. */
  private renewing(): void {
    if (this.renewal) return;
    this.renewal = setInterval(() => {
      const slots = [...this.open].map(([slot, holder]) => ({ slot, holder }));
      void this.slots.renew(slots, Date.now() + LEASE_MS).catch(() => undefined);
    }, LEASE_MS / 3);
    this.renewal.unref();
  }
}
