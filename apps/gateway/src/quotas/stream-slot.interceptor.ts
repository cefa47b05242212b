import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Observable } from 'rxjs';
import { ANONYMOUS_CALLER, type Caller } from '#core/auth/caller.js';
import { StreamQuota, type ReleaseStream } from './stream-quota.js';

/**
 * Holds a stream slot (StreamQuota) for as long as the response is open: on the routes that
 * stream (SSE) or wait for a run's end. The slot is taken before anything is answered, so a
 * refusal is a plain 429 or 503, and given back when the connection closes, however it ends.
 */
@Injectable()
export class HoldsStreamSlot implements NestInterceptor {
  constructor(private readonly quota: StreamQuota) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request & { caller?: Caller }>();
    const res = http.getResponse<Response>();
    let closed = false;
    let release: ReleaseStream | undefined;
    // Listening before the slot is taken: a client gone while Redis answered still gives it back.
    res.once('close', () => {
      closed = true;
      release?.();
    });
    release = await this.quota.take(req.caller ?? ANONYMOUS_CALLER);
    if (closed) release();
    return next.handle();
  }
}
