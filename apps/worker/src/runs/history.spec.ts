import { messageBytes } from '#core/llm/byte-budget.js';
import type { ChatMessage } from '#core/llm/chat-model.js';
import { MemoryConversationStore } from '#core/session/memory-conversation-store.js';
import type { MessageRecord, MessageStore } from '#core/session/session-store.js';
import { historyBefore, loadHistory, newestWithin } from './history.js';

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

  it('takes a run that continues from its client’s tool results as starting there: they and later queued messages stay out', () => {
    const records = [msg('r1', 'user', 'u1'), msg('r1', 'assistant', 'a1'), msg('r2', 'tool', 't2'), msg('r3', 'user', 'u3')];
    expect(historyBefore(records, 'r2').map((m) => m.content)).toEqual(['u1', 'a1']);
  });
});

const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string, calls: Array<{ id: string; args?: Record<string, unknown> }> = []): ChatMessage => ({
  role: 'assistant',
  content,
  ...(calls.length ? { toolCalls: calls.map((c) => ({ id: c.id, name: 'read_file', arguments: c.args ?? {} })) } : {}),
});
const toolAnswer = (id: string, content: string): ChatMessage => ({ role: 'tool', name: 'read_file', toolCallId: id, content });
const weight = (messages: ChatMessage[]) => messages.reduce((sum, m) => sum + messageBytes(m), 0);

/** Every tool message follows the assistant message that called it, and every call has its answer. */
function expectWholeExchanges(messages: ChatMessage[]): void {
  for (let i = 0; i < messages.length; i++) {
    const calls = messages[i]!.toolCalls ?? [];
    const answers = messages.slice(i + 1).findIndex((m) => m.role !== 'tool');
    const following = messages.slice(i + 1, answers === -1 ? undefined : i + 1 + answers);
    if (calls.length) expect(following.map((m) => m.toolCallId).sort()).toEqual(calls.map((c) => c.id).sort());
    if (messages[i]!.role === 'tool') {
      let j = i - 1;
      while (j >= 0 && messages[j]!.role === 'tool') j--;
      expect(messages[j]?.toolCalls?.map((c) => c.id)).toContain(messages[i]!.toolCallId);
    }
  }
}

describe('newestWithin', () => {
  const kb = (tag: string) => tag + 'x'.repeat(1024);

  it('keeps the newest messages that fit in the byte budget', () => {
    const messages = [user(kb('u1')), assistant(kb('a1')), user(kb('u2')), assistant(kb('a2'))];
    expect(newestWithin(messages, 10_000)).toEqual(messages);
    expect(newestWithin(messages, 2 * 1026 + 100).map((m) => m.content.slice(0, 2))).toEqual(['u2', 'a2']);
  });

  it('never separates tool calls from their answers, whatever the budget', () => {
    const messages = [
      toolAnswer('gone', 'an answer whose call is not in the history'),
      user('read both files'),
      assistant('', [{ id: 'c1', args: { path: 'files/a.txt' } }, { id: 'c2', args: { path: 'files/b.txt', padding: 'p'.repeat(3_000) } }]),
      toolAnswer('c1', 'a'.repeat(5_000)),
      toolAnswer('c2', 'b'.repeat(700)),
      assistant('Both read.'),
      user('and now?'),
      assistant('Done.'),
    ];
    for (let budget = 0; budget <= weight(messages) + 10; budget += 97) {
      const kept = newestWithin(messages, budget);
      expect(weight(kept)).toBeLessThanOrEqual(budget);
      expect(kept[0]?.role).not.toBe('tool');
      expectWholeExchanges(kept);
    }
  });

  it('cuts an exchange too large for what is left, with a marker, instead of dropping it', () => {
    const messages = [user('read it'), assistant('', [{ id: 'c1' }]), toolAnswer('c1', 'é'.repeat(100_000)), assistant('It is long.')];
    const kept = newestWithin(messages, 10_000);
    expect(kept.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant']);
    expect(kept[1]!.content).toMatch(/^é+\n\[… cut: 18\d\.\d KB of 195\.3 KB not shown; the conversation sent with each turn is limited to 9\.8 KB\]$/);
    expect(weight(kept)).toBeLessThanOrEqual(10_000);
    expect(kept[2]).toEqual(messages[3]);
  });
});

describe('loadHistory', () => {
  const KB = 'x'.repeat(1024);

  async function sessionWith(messages: Array<Pick<MessageRecord, 'runId' | 'role' | 'content'> & { metadata?: Record<string, unknown> }>) {
    const store = new MemoryConversationStore();
    const session = await store.sessions.create({ tenantId: 't', userId: 'u', assistantId: 'a' });
    await store.messages.append(messages.map((m) => ({ sessionId: session.sessionId, metadata: {}, ...m })));
    let read = 0;
    const counted: MessageStore = {
      ...store.messages,
      list: async (sessionId, page) => {
        const records = await store.messages.list(sessionId, page);
        read += records.length;
        return records;
      },
    };
    return { sessionId: session.sessionId, messages: counted, read: () => read };
  }

  it('reads only the newest pages of a long session, then keeps what fits', async () => {
    const earlier = Array.from({ length: 1_000 }, (_, i) => [
      { runId: `r${i}`, role: 'user' as const, content: `q${i} ${KB}` },
      { runId: `r${i}`, role: 'assistant' as const, content: `a${i} ${KB}` },
    ]).flat();
    const { sessionId, messages, read } = await sessionWith([...earlier, { runId: 'now', role: 'user', content: 'the new question' }]);
    const history = await loadHistory(messages, sessionId, 'now', 20 * 1024);
    expect(history.at(-1)!.content.startsWith('a999 ')).toBe(true);
    expect(history.length).toBeGreaterThanOrEqual(18);
    expect(weight(history)).toBeLessThanOrEqual(20 * 1024);
    expect(read()).toBeLessThan(1_000);
  });

  it('reads back far enough to find the call of a tool answer at the edge of a page', async () => {
    const calls = [{ id: 'c1', name: 'read_file', arguments: { path: 'files/big.txt' } }];
    const small = Array.from({ length: 198 }, (_, i) => ({ runId: `s${i}`, role: (i % 2 ? 'assistant' : 'user') as 'assistant' | 'user', content: `m${i}` }));
    const { sessionId, messages } = await sessionWith([
      { runId: 'r1', role: 'user', content: 'read it' },
      { runId: 'r1', role: 'assistant', content: '', metadata: { tool_calls: calls } },
      { runId: 'r1', role: 'tool', content: 'z'.repeat(50_000), metadata: { name: 'read_file', tool_call_id: 'c1' } },
      ...small,
      { runId: 'now', role: 'user', content: 'next' },
    ]);
    const history = await loadHistory(messages, sessionId, 'now', 20 * 1024);
    expectWholeExchanges(history);
    expect(history.find((m) => m.role === 'tool')?.content).toMatch(/^z+\n\[… cut: /);
    expect(history.at(-1)!.content).toBe('m197');
  });
});
