import { Controller, Delete, Inject, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { isAdmin, type Caller } from '#core/auth/caller.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { ApiError } from '../common/api-error.js';
import { STORE } from '../infra/tokens.js';
import { MemoryCleared } from './user-answers.dto.js';

@Controller('users')
export class MemoryController {
  constructor(@Inject(STORE) private readonly store: ConversationStore) {}

  /** Clears a user's long-term memory (all assistants). Users clear their own; admins any user of their tenant. */
  @Delete(':userId/memory')
  @ApiOperation({ summary: "Clear a user's long-term memory (your own; admins: anyone in their tenant)" })
  @ApiOkResponse({ type: MemoryCleared })
  async clear(@CurrentCaller() caller: Caller, @Param('userId') userId: string): Promise<MemoryCleared> {
    if (userId !== caller.userId && !isAdmin(caller)) throw ApiError.notFound('user', userId);
    await this.store.memories.clear({ tenantId: caller.tenantId, userId });
    return { user_id: userId, cleared: true };
  }
}
