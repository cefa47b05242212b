import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '#core/auth/caller.js';
import type { ConversationStore, SessionRecord } from '#core/session/session-store.js';
import { ApiError } from '../common/api-error.js';
import { STORE } from '../infra/tokens.js';

/** Finds sessions the caller owns; another user's session is reported as not found. */
@Injectable()
export class SessionAccess {
  constructor(@Inject(STORE) private readonly store: ConversationStore) {}

  /** @throws ApiError 404 when the session does not exist or belongs to someone else. */
  async getOwned(caller: Caller, sessionId: string): Promise<SessionRecord> {
    const session = await this.store.sessions.get(sessionId);
    if (!session || session.tenantId !== caller.tenantId || session.userId !== caller.userId) {
      throw ApiError.notFound('session', sessionId);
    }
    return session;
  }
}

export function sessionView(s: SessionRecord) {
  return {
    session_id: s.sessionId,
    assistant_id: s.assistantId,
    title: s.title,
    metadata: s.metadata,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
    last_active_at: s.lastActiveAt.toISOString(),
  };
}
