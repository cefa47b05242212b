import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
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
 * its slot back when it closes. While Redis does not answer, each process counts alone.
 */
@Injectable()
export class StreamQuota implements OnApplicationShutdown {
  private readonly slots: StreamSlots;
  private readonly open = new Map<string, StreamHolder>();
  /** Of `open`, how many each key and each person hold. */
  private readonly perKeyHere = new Map<string, number>();
  private readonly perPersonHere = new Map<string, number>();
  /** This process's streams at most; null: no cap. */
  readonly capacity: number | null;
  private readonly gatewayId = randomUUID();
  private readonly logger = new Logger('streams');
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
    // What this process holds alone already fills a cap: refused without asking Redis, so a flood costs little.
    const here = this.heldHere(holder);
    if (perKey > 0 && here.key >= perKey) throw keyFull(perKey);
    if (perPerson > 0 && here.person >= perPerson) throw personFull(perPerson);
    // Held here before Redis answers: a burst on this process cannot overshoot its cap meanwhile.
    this.hold(slot, holder);
    const refused = counted ? await this.slots.take(holder, slot, { perKey, perPerson }, Date.now() + LEASE_MS).catch((err: unknown) => this.redisAway(err)) : null;
    if (refused) {
      this.drop(slot);
      throw refused === 'key' ? keyFull(perKey) : personFull(perPerson);
    }
    if (counted) this.renewing();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.drop(slot);
      // A release that fails (Redis away) comes back when its lease ends.
      if (counted) void this.slots.giveBack(holder, slot).catch(() => undefined);
    };
  }

  /**
   * Redis did not answer: the stream is let in, counted by this process alone (its own counts
   * already held it to both caps), so an outage does not take streams down with it.
   */
  private redisAway(err: unknown): null {
    this.logger.warn(`stream slots not counted across gateways while Redis does not answer: ${err instanceof Error ? err.message : String(err)}`);
    return null;
  }

  /** The streams this process holds for the holder's key and for the holder's person. */
  private heldHere(holder: StreamHolder): { key: number; person: number } {
    return { key: this.perKeyHere.get(keyOf(holder)) ?? 0, person: this.perPersonHere.get(personOf(holder)) ?? 0 };
  }

  private hold(slot: string, holder: StreamHolder): void {
    this.open.set(slot, holder);
    count(this.perKeyHere, keyOf(holder), 1);
    count(this.perPersonHere, personOf(holder), 1);
  }

  private drop(slot: string): void {
    const holder = this.open.get(slot);
    if (!holder) return;
    this.open.delete(slot);
    count(this.perKeyHere, keyOf(holder), -1);
    count(this.perPersonHere, personOf(holder), -1);
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

function keyFull(max: number): ApiError {
  return tooMany('stream_limit', `This API key holds ${max} streams open, its most; close one or retry in ${RETRY_AFTER_SECONDS} s`, 'streams_per_key', max, RETRY_AFTER_SECONDS);
}

function personFull(max: number): ApiError {
  return tooMany('stream_limit', `You hold ${max} streams open, your most; close one or retry in ${RETRY_AFTER_SECONDS} s`, 'streams_per_user', max, RETRY_AFTER_SECONDS);
}

const keyOf = (holder: StreamHolder) => JSON.stringify([holder.tenantId, holder.userId, holder.keyId]);
const personOf = (holder: StreamHolder) => JSON.stringify([holder.tenantId, holder.userId]);

function count(counts: Map<string, number>, name: string, by: number): void {
  const next = (counts.get(name) ?? 0) + by;
  if (next > 0) counts.set(name, next);
  else counts.delete(name);
}
