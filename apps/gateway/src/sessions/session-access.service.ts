import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '#core/auth/caller.js';
import type { ConversationStore, RunRecord, SessionRecord } from '#core/session/session-store.js';
import { ApiError } from '../common/api-error.js';
import { STORE } from '../infra/tokens.js';
import type { SessionView } from './session-view.dto.js';

/** Whether a session or run is the caller's: the same tenant and the same user. */
function ownedBy(caller: Caller, record: { tenantId: string; userId: string }): boolean {
  return record.tenantId === caller.tenantId && record.userId === caller.userId;
}

/** Finds sessions and runs the caller owns; another user's is reported as not found, as if it did not exist. */
@Injectable()
export class SessionAccess {
  constructor(@Inject(STORE) private readonly store: ConversationStore) {}

  /** @throws ApiError 404 when the session does not exist or belongs to someone else. */
  async getOwned(caller: Caller, sessionId: string): Promise<SessionRecord> {
    const session = await this.findOwned(caller, sessionId);
    if (!session) throw ApiError.notFound('session', sessionId);
    return session;
  }

  /**
   * For a client that names the session it wants created if missing.
   * @returns the session, or null when it does not exist.
   * @throws ApiError 404 when it belongs to someone else.
   */
  async findOwned(caller: Caller, sessionId: string): Promise<SessionRecord | null> {
    const session = await this.store.sessions.get(sessionId);
    if (session && !ownedBy(caller, session)) throw ApiError.notFound('session', sessionId);
    return session;
  }

  /** @throws ApiError 404 when the run does not exist, belongs to someone else, or (given `sessionId`) to another session. */
  async getOwnedRun(caller: Caller, runId: string, sessionId?: string): Promise<RunRecord> {
    const run = await this.store.runs.get(runId);
    if (!run || !ownedBy(caller, run) || (sessionId && run.sessionId !== sessionId)) throw ApiError.notFound('run', runId);
    return run;
  }
}

/** A session as the API shows it. */
export function sessionView(s: SessionRecord): SessionView {
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
