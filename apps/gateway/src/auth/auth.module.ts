import { Global, Module } from '@nestjs/common';
import { Quotas } from '../quotas/quotas.service.js';
import { ApiKeyService } from './api-key.service.js';
import { StreamTickets } from './stream-tickets.service.js';

/**
 * One ApiKeyService (and its cache of issued keys), one Quotas and the stream tickets for the
 * whole gateway: the guard, the sockets, the stream routes and the admin routes share them.
 */
@Global()
@Module({ providers: [ApiKeyService, Quotas, StreamTickets], exports: [ApiKeyService, Quotas, StreamTickets] })
export class AuthModule {}
