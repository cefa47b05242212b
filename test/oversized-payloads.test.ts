import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventDict } from '#core/events/execution-event.js';
import { api, assertWellFormedRun, connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat } from './support/event-waits.js';
import { lastUserText, type RecordedRequest, type WireMessage } from './support/scripted-llm-server.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

const TOOL_RESULT_MAX_BYTES = 64 * 1024; // the default of DATAAGENT_TOOL_RESULT_MAX_BYTES
const HISTORY_MAX_BYTES = 100_000;

/** Bytes of a wire message's text and tool calls: what DATAAGENT_HISTORY_MAX_BYTES bounds. */
const wireBytes = (m: WireMessage) => Buffer.byteLength(typeof m.content === 'string' ? m.content : '') + (m.tool_calls ? Buffer.byteLength(JSON.stringify(m.tool_calls)) : 0);

/** Every tool message answers a call of the assistant message before it, and every call is answered. */
function expectWholeExchanges(messages: WireMessage[]): void {
  messages.forEach((m, i) => {
    if (m.role === 'tool') {
      let j = i - 1;
      while (messages[j]?.role === 'tool') j--;
      expect(messages[j]?.tool_calls?.map((c) => c.id)).toContain(m.tool_call_id);
    }
    for (const call of m.tool_calls ?? []) expect(messages.some((t) => t.role === 'tool' && t.tool_call_id === call.id)).toBe(true);
  });
}

describe('oversized tool results and history', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_HISTORY_MAX_BYTES: String(HISTORY_MAX_BYTES) } });
    const files = join(system.dataDir, 'workspaces', 'acme', 'alice', 'files');
    mkdirSync(files, { recursive: true });
    // ~10 MB for read_file; ~1.2 MB of matching lines for grep (which skips files over 5 MB).
    writeFileSync(join(files, 'big.txt'), Array.from({ length: 5_000 }, (_, i) => `line ${i} `.padEnd(2_000, 'x')).join('\n') + '\n');
    writeFileSync(join(files, 'wide.txt'), Array.from({ length: 2_000 }, (_, i) => `match ${i} `.padEnd(600, 'y')).join('\n') + '\n');
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('caps tool results everywhere they go, and the next turn gets a bounded prompt', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    const turn = async (message: string, sessionId?: string): Promise<{ sessionId: string; run: EventDict[]; requests: RecordedRequest[] }> => {
      const before = system.llm.requests.length;
      const ack = await sendChat(socket, { message, ...(sessionId ? { session_id: sessionId } : {}) });
      await events.done(ack.run_id, 120_000);
      const run = events.ofRun(ack.run_id);
      assertWellFormedRun(run);
      return { sessionId: ack.session_id, run, requests: system.llm.requests.slice(before) };
    };
    try {
      const first = await turn('[[tool:read_file {"path":"files/big.txt"}]] [[tool:grep {"pattern":"^match","path":"files/wide.txt","max_results":1000}]]');
      const results = first.run.filter((e) => e.event_type === 'tool_result');
      expect(results.map((r) => r.status)).toEqual(['success', 'success']);
      const [read, grep] = results.map((r) => String(r.result));
      // read_file pages by bytes and says how to go on; grep's ~500 KB is cut by the common cap.
      expect(Buffer.byteLength(read!)).toBeLessThanOrEqual(TOOL_RESULT_MAX_BYTES);
      expect(read).toMatch(/^ +1\tline 0 x+\n/);
      expect(read).toMatch(/\n\(page full at 63\.8 KB: \d+ more lines; continue with offset \d+\)$/);
      expect(Buffer.byteLength(grep!)).toBeLessThanOrEqual(TOOL_RESULT_MAX_BYTES);
      expect(grep).toMatch(/^files\/wide\.txt:1: match 0 y+…\n/);
      expect(grep).toMatch(/\n\[… cut: \d+\.\d KB of \d+\.\d KB not shown; tool results are limited to 64\.0 KB\. Ask for a smaller part: [^\]]+\]$/);
      expect(first.run.filter((e) => e.event_type === 'done')).toEqual([expect.objectContaining({ cancelled: false })]);

      // The model got the same capped results, and so did MySQL.
      const afterTools = first.requests.at(-1)!.body.messages!;
      expect(afterTools.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([read, grep]);
      const stored = await api(system.url, 'GET', `/sessions/${first.sessionId}/messages`, { apiKey: TEST_API_KEY });
      expect(stored.body.messages.filter((m: { role: string }) => m.role === 'tool').map((m: { content: string }) => m.content)).toEqual([read, grep]);

      // The next turn carries the newest history within DATAAGENT_HISTORY_MAX_BYTES, exchanges whole.
      const second = await turn('and now?', first.sessionId);
      expect(second.run.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
      const prompt = second.requests[0]!;
      expect(lastUserText(prompt)).toBe('and now?');
      const history = prompt.body.messages!.slice(1, -1);
      expect(history.reduce((sum, m) => sum + wireBytes(m), 0)).toBeLessThanOrEqual(HISTORY_MAX_BYTES + 1_000);
      expectWholeExchanges(prompt.body.messages!);
      const toolTexts = history.filter((m) => m.role === 'tool').map((m) => String(m.content));
      expect(toolTexts).toHaveLength(2);
      for (const text of toolTexts) expect(text).toMatch(/\[… cut: [^\]]+ not shown; the conversation sent with each turn is limited to 97\.7 KB\]$/);
    } finally {
      socket.disconnect();
    }
  }, 180_000);
});
