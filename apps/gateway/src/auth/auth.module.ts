import { Global, Module } from '@nestjs/common';
import { ApiKeyService } from './api-key.service.js';

/** One ApiKeyService (and its cache of issued keys) for the whole gateway: the guard, the sockets and the key admin share it. */
@Global()
@Module({ providers: [ApiKeyService], exports: [ApiKeyService] })
export class AuthModule {}
