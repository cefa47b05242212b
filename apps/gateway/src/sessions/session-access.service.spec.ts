import type { Caller } from '#core/auth/caller.js';
import type { ConversationStore, RunRecord, SessionRecord } from '#core/session/session-store.js';
import { SessionAccess } from './session-access.service.js';

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

  it('finds a session a client may create: null when missing, 404 when foreign', async () => {
    const a = access();
    expect((await a.findOwned(alice, 's-alice'))?.sessionId).toBe('s-alice');
    expect(await a.findOwned(alice, 's-missing')).toBeNull();
    expect(await outcome(a.findOwned(alice, 's-bob'))).toBe('404 session_not_found');
    expect(await outcome(a.findOwned(alice, 's-other'))).toBe('404 session_not_found');
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
