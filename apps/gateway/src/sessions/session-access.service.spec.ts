import type { Caller } from '#core/auth/caller.js';
import type { ConversationStore, RunRecord, SessionRecord } from '#core/session/session-store.js';
import { SessionAccess } from './session-access.service.js';
import { scopedSessionId } from './client-session-id.js';

const alice: Caller = { tenantId: 'acme', userId: 'alice', role: 'user' };
const session = (sessionId: string, tenantId: string, userId: string) => ({ sessionId, tenantId, userId }) as SessionRecord;
const run = (runId: string, sessionId: string, tenantId: string, userId: string) => ({ runId, sessionId, tenantId, userId }) as RunRecord;

/** Alice's session and run, Bob's in the same tenant, and an Alice of another tenant. */
function access(): SessionAccess {
  const sessions = new Map([session('s-alice', 'acme', 'alice'), session('s-bob', 'acme', 'bob'), session('s-other', 'globex', 'alice')].map((s) => [s.sessionId, s]));
  const runs = new Map([run('r-alice', 's-alice', 'acme', 'alice'), run('r-bob', 's-bob', 'acme', 'bob'), run('r-other', 's-other', 'globex', 'alice')].map((r) => [r.runId, r]));
  const store = {
    sessions: { get: async (id: string) => sessions.get(id) ?? null },
    runs: { get: async (id: string) => runs.get(id) ?? null },
  } as unknown as ConversationStore;
  return new SessionAccess(store);
}

/** The 404 a client sees, or 'ok'. */
const outcome = (p: Promise<unknown>) => p.then(() => 'ok', (err: { status?: number; errorCode?: string }) => `${err.status} ${err.errorCode}`);

describe('SessionAccess', () => {
  it("answers another user's session as it answers a missing one: 404", async () => {
    const a = access();
    expect(await outcome(a.getOwned(alice, 's-alice'))).toBe('ok');
    expect(await outcome(a.getOwned(alice, 's-bob'))).toBe('404 session_not_found');
    expect(await outcome(a.getOwned(alice, 's-other'))).toBe('404 session_not_found');
    expect(await outcome(a.getOwned(alice, 's-missing'))).toBe('404 session_not_found');
  });

  it('finds a session by the name its client chose in that client\'s own name space', async () => {
    const a = access();
    // A session the server named, the caller's: found by that id.
    expect(await a.findNamed(alice, 's-alice')).toMatchObject({ sessionId: 's-alice', session: { sessionId: 's-alice' } });
    // Another person's id, or one nobody uses: the caller's own (new) session of that name, the same answer.
    const bobs = await a.findNamed(alice, 's-bob');
    const nobodys = await a.findNamed(alice, 's-missing');
    expect(bobs).toEqual({ sessionId: scopedSessionId(alice, 's-bob'), session: null });
    expect(nobodys).toEqual({ sessionId: scopedSessionId(alice, 's-missing'), session: null });
    expect(await outcome(a.getNamed(alice, 's-bob'))).toBe('404 session_not_found');
    expect(await outcome(a.getNamed(alice, 's-other'))).toBe('404 session_not_found');
  });

  it("answers another user's run, or a run of another session, as missing", async () => {
    const a = access();
    expect((await a.getOwnedRun(alice, 'r-alice')).sessionId).toBe('s-alice');
    expect(await outcome(a.getOwnedRun(alice, 'r-alice', 's-alice'))).toBe('ok');
    expect(await outcome(a.getOwnedRun(alice, 'r-alice', 's-bob'))).toBe('404 run_not_found');
    expect(await outcome(a.getOwnedRun(alice, 'r-bob'))).toBe('404 run_not_found');
    expect(await outcome(a.getOwnedRun(alice, 'r-other'))).toBe('404 run_not_found');
    expect(await outcome(a.getOwnedRun(alice, 'r-missing'))).toBe('404 run_not_found');
  });
});
