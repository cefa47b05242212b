import { type CanActivate, type ExecutionContext, Injectable, SetMetadata, applyDecorators, createParamDecorator } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiSecurity } from '@nestjs/swagger';
import type { Request } from 'express';
import type { Caller } from '#core/auth/caller.js';
import { Quotas } from '../quotas/quotas.service.js';
import { ApiKeyService } from './api-key.service.js';

const PUBLIC = 'dataagent:public';

/** Marks a route that needs no API key (health); its OpenAPI operation says so with an empty security requirement. */
export const Public = () => applyDecorators(SetMetadata(PUBLIC, true), ApiSecurity({}));

type AuthedRequest = Request & { caller?: Caller };

/** Resolves every HTTP request to a caller from its X-API-Key header, or `Authorization: Bearer <key>` (what OpenAI clients send). */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly keys: ApiKeyService,
    private readonly quotas: Quotas,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC, [context.getHandler(), context.getClass()])) return true;
    const req = context.switchToHttp().getRequest<AuthedRequest>();
    req.caller = await this.keys.resolve(requestApiKey(req));
    await this.quotas.countRequest(req.caller);
    return true;
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
