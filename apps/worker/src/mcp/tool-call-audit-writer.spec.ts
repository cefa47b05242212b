import type { ToolCallQuery, ToolCallRecord } from '#core/mcp/tool-call-audit.js';
import { MemoryToolCallAuditStore } from '#core/mcp/tool-call-audit.js';
import { ToolCallAuditWriter } from './tool-call-audit-writer.js';

const record = (n: number): ToolCallRecord => ({
  callId: `call-${n}`,
  traceId: '0'.repeat(32),
  tenantId: 't',
  userId: 'u',
  sessionId: 's',
  runId: 'r',
  agentId: 'a',
  serverName: 'shop',
  toolName: 'shop.get_order',
  toolCallId: `c${n}`,
  schemaVersion: '',
  validation: 'ok',
  status: 'ok',
  startedAt: new Date(n),
  endedAt: new Date(n),
  durationMs: 0,
  argsBytes: 0,
  argsSha256: '',
  resultBytes: 0,
  resultSha256: '',
});

/** A store that refuses writes while `down` is set, counting the batches it was given. */
class FlakyStore extends MemoryToolCallAuditStore {
  down = false;
  batches = 0;
  override async append(records: readonly ToolCallRecord[]): Promise<void> {
    this.batches++;
    if (this.down) throw new Error('database unavailable');
    await super.append(records);
  }
}

describe('ToolCallAuditWriter', () => {
  const all: ToolCallQuery = { limit: 100, offset: 0 };
  const quiet = { warn: () => {} };

  it('writes records in batches, not one by one, and keeps a refused batch for the next flush', async () => {
    const store = new FlakyStore();
    const writer = new ToolCallAuditWriter(store, quiet, { intervalMs: 60_000, batchSize: 10 });
    for (let i = 0; i < 5; i++) writer.add(record(i));
    expect(store.batches).toBe(0);
    store.down = true;
    await writer.flush();
    expect(await store.list('t', all)).toEqual([]);
    store.down = false;
    for (let i = 5; i < 8; i++) writer.add(record(i));
    await writer.close();
    expect((await store.list('t', all)).map((r) => r.callId).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `call-${i}`).sort());
    expect(store.batches).toBe(2);
  });

  it('flushes on its own once a batch is full', async () => {
    const store = new FlakyStore();
    const writer = new ToolCallAuditWriter(store, quiet, { intervalMs: 60_000, batchSize: 3 });
    for (let i = 0; i < 3; i++) writer.add(record(i));
    await writer.flush();
    expect(store.batches).toBe(1);
    expect(await store.list('t', all)).toHaveLength(3);
    await writer.close();
  });
});
