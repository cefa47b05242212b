import { Global, Module } from '@nestjs/common';
import { Quotas } from '../quotas/quotas.service.js';
import { ApiKeyService } from './api-key.service.js';

/**
 * One ApiKeyService (and its cache of issued keys) and one Quotas for the whole gateway: the
 * guard, the sockets and the admin routes share them.
 */
@Global()
@Module({ providers: [ApiKeyService, Quotas], exports: [ApiKeyService, Quotas] })
export class AuthModule {}
