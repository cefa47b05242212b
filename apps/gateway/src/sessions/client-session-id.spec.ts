import type { SessionRecord } from '#core/session/session-store.js';
import { CLIENT_SESSION_ID_KEY, clientSessionId, scopedSessionId } from './client-session-id.js';

const alice = { tenantId: 'acme', userId: 'alice' };
const bob = { tenantId: 'globex', userId: 'bob' };

describe('scopedSessionId', () => {
  it("gives each person their own session for the same client id", () => {
    expect(scopedSessionId(alice, 'my-thread')).not.toBe(scopedSessionId(bob, 'my-thread'));
    expect(scopedSessionId(alice, 'my-thread')).not.toBe(scopedSessionId({ tenantId: 'globex', userId: 'alice' }, 'my-thread'));
    expect(scopedSessionId(alice, 'my-thread')).toBe(scopedSessionId(alice, 'my-thread'));
  });

  it('cannot be steered by separators inside tenant, user or id', () => {
    expect(scopedSessionId({ tenantId: 'a', userId: 'b\u0000c' }, 'd')).not.toBe(scopedSessionId({ tenantId: 'a', userId: 'b' }, 'c\u0000d'));
  });

  it('fits a session id: 64 characters at most, letters, digits, _ and -', () => {
    expect(scopedSessionId(alice, 'x'.repeat(64))).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });
});

describe('clientSessionId', () => {
  const named = (owner: typeof alice, sessionId: string, metadata: Record<string, unknown>) => ({ ...owner, sessionId, metadata }) as SessionRecord;

  it('shows the id the client chose for its session', () => {
    expect(clientSessionId(named(alice, scopedSessionId(alice, 'chat-1'), { [CLIENT_SESSION_ID_KEY]: 'chat-1' }))).toBe('chat-1');
  });

  it("shows a server-named session's own id", () => {
    expect(clientSessionId(named(alice, '2f0c1b8e-1111-4a4a-9999-000000000000', {}))).toBe('2f0c1b8e-1111-4a4a-9999-000000000000');
  });

  it('ignores a name in metadata that does not map to the session (metadata edited, or copied from elsewhere)', () => {
    expect(clientSessionId(named(alice, scopedSessionId(alice, 'chat-1'), { [CLIENT_SESSION_ID_KEY]: 'chat-2' }))).toBe(scopedSessionId(alice, 'chat-1'));
    expect(clientSessionId(named(alice, scopedSessionId(bob, 'chat-1'), { [CLIENT_SESSION_ID_KEY]: 'chat-1' }))).toBe(scopedSessionId(bob, 'chat-1'));
  });
});
