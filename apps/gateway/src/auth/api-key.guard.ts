import { type CanActivate, type ExecutionContext, Injectable, SetMetadata, applyDecorators, createParamDecorator } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiQuery, ApiSecurity } from '@nestjs/swagger';
import type { Request } from 'express';
import { ANONYMOUS_CALLER, type Caller } from '#core/auth/caller.js';
import { Quotas } from '../quotas/quotas.service.js';
import { ApiKeyService } from './api-key.service.js';
import { StreamTickets } from './stream-tickets.service.js';

const PUBLIC = 'dataagent:public';
const STREAM_TICKET = 'dataagent:stream-ticket';

/** Marks a route that needs no API key (health); its OpenAPI operation says so with an empty security requirement. */
export const Public = () => applyDecorators(SetMetadata(PUBLIC, true), ApiSecurity({}));

/**
 * Marks a stream route a browser's EventSource opens: there, a request without a key may carry
 * `?ticket=` (a {@link StreamTickets} ticket issued for this very path) instead.
 */
export const AcceptsStreamTicket = () =>
  applyDecorators(
    SetMetadata(STREAM_TICKET, true),
    ApiQuery({ name: 'ticket', required: false, type: String, description: 'A stream ticket (POST /api/v1/runs/{run_id}/stream-tickets), for clients that cannot send X-API-Key: a browser\'s EventSource' }),
  );

type AuthedRequest = Request & { caller?: Caller };

/**
 * Resolves every HTTP request to a caller from its X-API-Key header, or `Authorization: Bearer <key>`
 * (what OpenAI clients send); on a route marked {@link AcceptsStreamTicket}, from its `?ticket=`
 * when it has no key.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly keys: ApiKeyService,
    private readonly tickets: StreamTickets,
    private readonly quotas: Quotas,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC, targets)) return true;
    const req = context.switchToHttp().getRequest<AuthedRequest>();
    const key = requestApiKey(req);
    const ticket = key === undefined && this.reflector.getAllAndOverride<boolean>(STREAM_TICKET, targets) ? req.query.ticket : undefined;
    req.caller = ticket === undefined ? await this.keys.resolve(key) : await this.ticketCaller(ticket, req);
    await this.quotas.countRequest(req.caller);
    return true;
  }

  private ticketCaller(ticket: unknown, req: Request): Promise<Caller> {
    if (this.keys.authDisabled) return Promise.resolve(ANONYMOUS_CALLER);
    // A repeated or bracketed `ticket` parameter is no ticket we issued: the same answer as an unknown one.
    return this.tickets.redeem(typeof ticket === 'string' ? ticket : '', `${req.baseUrl}${req.path}`);
  }
}

/** The key an HTTP request carries: its X-API-Key header, else `Authorization: Bearer <key>`. */
export function requestApiKey(req: Request): string | undefined {
  const header = req.header('authorization');
  return req.header('x-api-key') ?? (header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined);
}

/** The caller of the current HTTP request. */
export const CurrentCaller = createParamDecorator((_: unknown, ctx: ExecutionContext): Caller => {
  return ctx.switchToHttp().getRequest<AuthedRequest>().caller!;
});
