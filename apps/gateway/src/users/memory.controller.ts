import { Controller, Delete, Inject, Param } from '@nestjs/common';
import { FileMemoryStore } from '#core/memory/memory-store.js';
import { isAdmin, type Caller } from '#core/session/caller.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { ApiError } from '../common/api-error.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { SETTINGS } from '../infra/tokens.js';

@Controller('users')
export class MemoryController {
  private readonly memory: FileMemoryStore;

  constructor(@Inject(SETTINGS) settings: GatewaySettings) {
    this.memory = new FileMemoryStore(settings.storage.storageRoot, { retentionDays: settings.storage.memoryRetentionDays });
  }

  /** Clears a user's long-term memory (all assistants). Users clear their own; admins any user of their tenant. */
  @Delete(':userId/memory')
  async clear(@CurrentCaller() caller: Caller, @Param('userId') userId: string) {
    if (userId !== caller.userId && !isAdmin(caller)) throw ApiError.notFound('user', userId);
    await this.memory.clear({ tenantId: caller.tenantId, userId });
    return { user_id: userId, cleared: true };
  }
}
