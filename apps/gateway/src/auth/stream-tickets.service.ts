import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { RedisClient } from '#transport/redis-connection.js';
import type { Caller, Role } from '#core/auth/caller.js';
import { redisKeys } from '#transport/redis-keys.js';
import { ApiError } from '../common/api-error.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { REDIS, SETTINGS } from '../infra/tokens.js';
import { ApiKeyService } from './api-key.service.js';

/** What every stream ticket starts with, so one found in a log or a URL is recognised as such. */
export const STREAM_TICKET_PREFIX = 'dast_';
/** Longer than any ticket we issue: a longer one is refused unread. */
const MAX_TICKET_LENGTH = 128;

/** What a ticket stands for, stored under the ticket's SHA-256. */
interface TicketRecord {
  tenant_id: string;
  user_id: string;
  role: Role;
  key_id?: string;
  /** The one stream path it opens, e.g. `/api/v1/runs/<run_id>/events`. */
  path: string;
}

/** A ticket as issued: shown to its caller once, never stored. */
export interface IssuedTicket {
  ticket: string;
  expiresAt: Date;
  expiresInSeconds: number;
}

const digest = (ticket: string) => createHash('sha256').update(ticket).digest('hex');

/**
 * Short-lived stream tickets, for clients that cannot send a header: a browser's EventSource.
 * A caller with an API key asks for one (POST), then opens the stream URL with `?ticket=`, so
 * the key itself never goes into a URL, a log line or a browser's history.
 *
 * A ticket is bound to its caller (tenant, user, role, key) and to one stream path, and lives
 * DATAAGENT_STREAM_TICKET_SECONDS. Within that time it opens its stream as often as asked:
 * EventSource reconnects by itself, with the same URL and a Last-Event-ID, after any drop, and a
 * single-use ticket would turn every such reconnect into a failure. Past it, a reconnect is
 * refused (401) and the client asks for a fresh ticket and resumes with `after_seq`. A ticket
 * stops working at once when its key is revoked or expires. It is kept in Redis under its
 * SHA-256 (any gateway redeems it), and never logged.
 */
@Injectable()
export class StreamTickets {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
    private readonly keys: ApiKeyService,
  ) {}

  /** A new ticket for `caller` that opens `path` only, for `seconds` (default DATAAGENT_STREAM_TICKET_SECONDS). */
  async issue(caller: Caller, path: string, seconds = this.settings.server.streamTicketSeconds): Promise<IssuedTicket> {
    const ticket = `${STREAM_TICKET_PREFIX}${randomBytes(32).toString('base64url')}`;
    const record: TicketRecord = { tenant_id: caller.tenantId, user_id: caller.userId, role: caller.role, ...(caller.keyId ? { key_id: caller.keyId } : {}), path };
    await this.redis.set(redisKeys.streamTicket(digest(ticket)), JSON.stringify(record), 'PX', Math.round(seconds * 1000));
    return { ticket, expiresAt: new Date(Date.now() + seconds * 1000), expiresInSeconds: seconds };
  }

  /**
   * The caller a ticket was issued to, when it opens `path`.
   * @throws ApiError 401 `invalid_stream_ticket` when the ticket is unknown, expired, or its key is no longer valid;
   *   403 `stream_ticket_wrong_stream` when it was issued for another stream.
   */
  async redeem(ticket: string, path: string): Promise<Caller> {
    const raw = ticket.startsWith(STREAM_TICKET_PREFIX) && ticket.length <= MAX_TICKET_LENGTH ? await this.redis.get(redisKeys.streamTicket(digest(ticket))) : null;
    if (!raw) throw invalidTicket('The stream ticket is not valid: it is unknown or has expired');
    const record = JSON.parse(raw) as TicketRecord;
    if (record.path !== path) {
      throw new ApiError(403, 'stream_ticket_wrong_stream', 'The stream ticket was issued for another stream: ask for one for this stream');
    }
    const caller: Caller = { tenantId: record.tenant_id, userId: record.user_id, role: record.role, ...(record.key_id ? { keyId: record.key_id } : {}) };
    if (!(await this.keys.isStillValid(caller))) throw invalidTicket('The stream ticket is not valid: the API key it was issued to has been revoked or has expired');
    return caller;
  }
}

/** Ends a ticket now (a single-use one, once redeemed); false when it was gone already. */
export async function consumeTicket(redis: RedisClient, ticket: string): Promise<boolean> {
  return (await redis.del(redisKeys.streamTicket(digest(ticket)))) === 1;
}

function invalidTicket(message: string): ApiError {
  return new ApiError(401, 'invalid_stream_ticket', `${message}. Ask for a new one with POST /api/v1/runs/{run_id}/stream-tickets and your API key`);
}

/** `url` with the value of any `ticket` or `api_key` query parameter masked, for a log line. */
export function withoutUrlSecrets(url: string | undefined): string | undefined {
  return url?.replace(/([?&](?:ticket|api_key)=)[^&#]*/gi, '$1***');
}
