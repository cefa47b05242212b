import type { MessageRecord } from '#core/session/session-store.js';
import { historyBefore } from './history.js';

const msg = (runId: string, role: MessageRecord['role'], content: string): MessageRecord => ({ messageId: content, sessionId: 's', runId, role, content, metadata: {}, createdAt: new Date() });

describe('historyBefore', () => {
  it('keeps earlier turns and drops the run itself', () => {
    const records = [msg('r1', 'user', 'u1'), msg('r1', 'assistant', 'a1'), msg('r2', 'user', 'u2')];
    expect(historyBefore(records, 'r2').map((m) => m.content)).toEqual(['u1', 'a1']);
  });

  it('keeps an earlier run’s answer stored after this run’s message and drops later queued messages', () => {
    const records = [msg('r1', 'user', 'u1'), msg('r2', 'user', 'u2'), msg('r3', 'user', 'u3'), msg('r1', 'assistant', 'a1')];
    expect(historyBefore(records, 'r2').map((m) => m.content)).toEqual(['u1', 'a1']);
  });
});
