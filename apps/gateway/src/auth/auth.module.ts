import { Global, Module } from '@nestjs/common';
import { Quotas } from '../quotas/quotas.service.js';
import { StreamQuota } from '../quotas/stream-quota.js';
import { HoldsStreamSlot } from '../quotas/stream-slot.interceptor.js';
import { ApiKeyService } from './api-key.service.js';
import { StreamTickets } from './stream-tickets.service.js';

/**
 * One ApiKeyService (and its cache of issued keys), one Quotas, one StreamQuota and the stream tickets for the
 * whole gateway: the guard, the sockets, the stream routes and the admin routes share them.
 */
@Global()
@Module({ providers: [ApiKeyService, Quotas, StreamTickets, StreamQuota, HoldsStreamSlot], exports: [ApiKeyService, Quotas, StreamTickets, StreamQuota, HoldsStreamSlot] })
export class AuthModule {}
