import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '#core/auth/caller.js';
import type { ConversationStore, RunRecord, SessionRecord } from '#core/session/session-store.js';
import { ApiError } from '../common/api-error.js';
import { STORE } from '../infra/tokens.js';
import type { SessionView } from './session-view.dto.js';
import { scopedSessionId } from './client-session-id.js';

/** The session a client-chosen id stands for: its stored id, and the session when it exists. */
export interface NamedSession {
  sessionId: string;
  session: SessionRecord | null;
}

/** Whether a session or run is the caller's: the same tenant and the same user. */
function ownedBy(caller: Caller, record: { tenantId: string; userId: string }): boolean {
  return record.tenantId === caller.tenantId && record.userId === caller.userId;
}

/** Finds sessions and runs the caller owns; another user's is reported as not found, as if it did not exist. */
@Injectable()
export class SessionAccess {
  constructor(@Inject(STORE) private readonly store: ConversationStore) {}

  /** The session by its stored id. @throws ApiError 404 when it does not exist or belongs to someone else. */
  async getOwned(caller: Caller, sessionId: string): Promise<SessionRecord> {
    const session = await this.store.sessions.get(sessionId);
    if (!session || !ownedBy(caller, session)) throw ApiError.notFound('session', sessionId);
    return session;
  }

  /**
   * The caller's session a client names by an id it chose (see scopedSessionId): a session the
   * server named (or one named before names were scoped) when the caller owns one by that id,
   * else the caller's own session of that name, which may not exist yet. Another person's
   * session is never found, and nothing answers differently for a name someone else uses.
   */
  async findNamed(caller: Caller, clientId: string): Promise<NamedSession> {
    const direct = await this.store.sessions.get(clientId);
    if (direct && ownedBy(caller, direct)) return { sessionId: clientId, session: direct };
    const sessionId = scopedSessionId(caller, clientId);
    const session = await this.store.sessions.get(sessionId);
    // Only its owner can create a scoped id; a foreign one would take a SHA-256 collision.
    return { sessionId, session: session && ownedBy(caller, session) ? session : null };
  }

  /** findNamed, for a session that must exist. @throws ApiError 404 naming the client's id. */
  async getNamed(caller: Caller, clientId: string): Promise<SessionRecord> {
    const { session } = await this.findNamed(caller, clientId);
    if (!session) throw ApiError.notFound('session', clientId);
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
