import { createHash } from 'node:crypto';
import type { SessionRecord } from '#core/session/session-store.js';

/** Where a session a client named keeps that name (its metadata), so the dialect can show it back. */
export const CLIENT_SESSION_ID_KEY = 'client_session_id';

/** Who chose an id: a tenant's user. */
export interface IdOwner {
  tenantId: string;
  userId: string;
}

/**
 * The stored id of the session a client names `clientId` (an AG-UI thread, a useChat id, an
 * `X-DataAgent-Session`, an A2A context). Client-chosen ids are each person's own name space:
 * the same `clientId` of two people is two sessions, so nobody can take a name before someone
 * else or learn from an answer that another person uses it.
 * @returns `c_` and 40 base64url characters of a SHA-256 over tenant, user and id (fits the 64 of a session id).
 */
export function scopedSessionId(owner: IdOwner, clientId: string): string {
  const digest = createHash('sha256').update(JSON.stringify([owner.tenantId, owner.userId, clientId])).digest('base64url');
  return `c_${digest.slice(0, 40)}`;
}

/**
 * The id a client knows a session by: the one it chose, or the server's for a session the
 * server named. The name kept in metadata counts only when it maps to this very session for
 * its owner, so metadata edited through the API cannot make a session show another name.
 */
export function clientSessionId(session: Pick<SessionRecord, 'sessionId' | 'tenantId' | 'userId' | 'metadata'>): string {
  const chosen = session.metadata?.[CLIENT_SESSION_ID_KEY];
  return typeof chosen === 'string' && scopedSessionId(session, chosen) === session.sessionId ? chosen : session.sessionId;
}
