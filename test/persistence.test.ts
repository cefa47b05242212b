import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import { SecretCipher } from '#core/secrets/secret-cipher.js';
import { MemoryConversationStore } from '#core/session/memory-conversation-store.js';
import { createConversationStore } from '#persistence/create-conversation-store.js';
import { DatabaseUnavailableError, createDataSource, openDatabase } from '#persistence/data-source.js';
import { MysqlConversationStore } from '#persistence/mysql-conversation-store.js';
import { conversationStoreContract } from './support/conversation-store-contract.js';
import { createTestDatabase, dropTestDatabase, type TestDatabase } from './support/databases.js';
import { waitUntil } from './support/event-waits.js';

const TABLES = ['run_events', 'runs', 'messages', 'sessions', 'mcp_servers', 'mcp_tools', 'mcp_tool_bindings', 'mcp_tool_call_log', 'api_keys', 'memories', 'usage_facts', 'model_prices', 'model_price_changes'];

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('persistence');
});

afterAll(async () => {
  if (db) await dropTestDatabase(db.database);
});

async function withDataSource<T>(config: TestDatabase, work: (ds: DataSource) => Promise<T>): Promise<T> {
  const ds = await openDatabase(config);
  try {
    return await work(ds);
  } finally {
    await ds.destroy();
  }
}

describe('MysqlConversationStore', () => {
  conversationStoreContract(async (now, cipher) => {
    const ds = await openDatabase(db);
    for (const table of TABLES) await ds.query(`DELETE FROM \`${table}\``);
    return new MysqlConversationStore(ds, now, cipher);
  });
});

describe('MySQL schema', () => {
  it('migrates a fresh database once; opening again runs nothing', async () => {
    const fresh = await createTestDatabase('migrate');
    try {
      // Three processes starting together: the named lock lets one of them migrate.
      const sources = await Promise.all([openDatabase(fresh), openDatabase(fresh), openDatabase(fresh)]);
      await Promise.all(sources.map((s) => s.destroy()));

      await withDataSource(fresh, async (ds) => {
        expect(await ds.showMigrations()).toBe(false);
        const applied = await ds.query('SELECT name FROM typeorm_migrations ORDER BY id');
        expect(applied).toEqual([{ name: 'InitialSchema1763769600000' }, { name: 'McpServers1764547200000' }, { name: 'McpTools1764633600000' }, { name: 'McpGovernance1764720000000' }, { name: 'ApiKeys1764806400000' }, { name: 'RunsByTenant1764892800000' }, { name: 'Tenants1764979200000' }, { name: 'Memories1765065600000' }, { name: 'McpOAuthGrants1765152000000' }, { name: 'EphemeralSessions1765238400000' }, { name: 'Usage1765324800000' }, { name: 'Budgets1765411200000' }]);
        const tables = await ds.query('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ?', [fresh.database]);
        expect(tables.map((t: { name: string }) => t.name).sort()).toEqual(['api_keys', 'budgets', 'mcp_oauth_grants', 'mcp_servers', 'mcp_tool_bindings', 'mcp_tool_call_log', 'mcp_tools', 'memories', 'messages', 'model_price_changes', 'model_prices', 'run_events', 'runs', 'sessions', 'tenants', 'typeorm_migrations', 'usage_facts']);
      });
    } finally {
      await dropTestDatabase(fresh.database);
    }
  });

  it('matches the entities exactly (no pending schema change)', async () => {
    await withDataSource(db, async (ds) => {
      const pending = await ds.driver.createSchemaBuilder().log();
      expect(pending.upQueries.map((q) => q.query)).toEqual([]);
    });
  });

  it('has the indexes the queries rely on, in utf8mb4', async () => {
    await withDataSource(db, async (ds) => {
      const rows: Array<{ tableName: string; indexName: string; columns: string }> = await ds.query(
        `SELECT table_name AS tableName, index_name AS indexName,
                GROUP_CONCAT(column_name ORDER BY seq_in_index) AS columns
           FROM information_schema.statistics WHERE table_schema = ?
          GROUP BY table_name, index_name`,
        [db.database],
      );
      const indexes = new Set(rows.map((r) => `${r.tableName}(${r.columns})`));
      for (const expected of [
        'sessions(tenant_id,user_id,last_active_at)',
        'sessions(tenant_id,assistant_id,last_active_at)',
        'messages(session_id,id)',
        'runs(session_id,status)',
        'runs(tenant_id,status)',
        'run_events(run_id,seq_from)',
        'mcp_servers(tenant_id,user_id,name)',
        'mcp_tools(tenant_id,user_id,server_name,tool_name)',
        'mcp_tool_bindings(tenant_id,created_at)',
        'api_keys(key_hash)',
        'api_keys(tenant_id,created_at)',
        'mcp_tool_call_log(tenant_id,started_at)',
        'mcp_tool_call_log(session_id,started_at)',
        'memories(tenant_id,user_id,assistant_id,created_at)',
        'usage_facts(run_id,seq)',
        'usage_facts(tenant_id,day)',
        'usage_facts(tenant_id,user_id,day)',
      ]) {
        expect(indexes).toContain(expected);
      }
      const charsets = await ds.query(
        'SELECT DISTINCT table_collation AS collation FROM information_schema.tables WHERE table_schema = ? AND table_name IN (?)',
        [db.database, TABLES],
      );
      expect(charsets).toEqual([{ collation: 'utf8mb4_unicode_ci' }]);
    });
  });
});

describe('MySQL storage details', () => {
  let store: MysqlConversationStore;
  let ds: DataSource;

  beforeEach(async () => {
    ds = await openDatabase(db);
    store = new MysqlConversationStore(ds);
  });

  afterEach(async () => {
    await store.close();
  });

  it('keeps history across a close and reopen', async () => {
    const session = await store.sessions.create({ tenantId: 't', userId: 'u', assistantId: 'a', title: 'kept' });
    const runId = randomUUID();
    await store.runs.create({ runId, sessionId: session.sessionId, tenantId: 't', userId: 'u', assistantId: 'a' });
    await store.messages.append([
      { sessionId: session.sessionId, runId, role: 'user', content: 'question', metadata: {} },
      { sessionId: session.sessionId, runId, role: 'assistant', content: 'answer', metadata: {} },
    ]);
    await store.events.appendBatch(runId, [
      { event_type: 'done', timestamp: new Date().toISOString(), session_id: session.sessionId, run_id: runId, seq: 1, cancelled: false },
    ]);
    await store.runs.markStarted(runId);
    await store.runs.markFinished(runId, 'completed');
    await store.close();

    const reopened = await MysqlConversationStore.open(db);
    try {
      expect(await reopened.sessions.get(session.sessionId)).toEqual(session);
      expect((await reopened.messages.list(session.sessionId, { limit: 10, offset: 0 })).map((m) => m.content)).toEqual(['question', 'answer']);
      expect(await reopened.runs.get(runId)).toMatchObject({ status: 'completed' });
      expect(await reopened.events.list(runId, 0)).toEqual([expect.objectContaining({ event_type: 'done', seq: 1 })]);
    } finally {
      await reopened.close();
    }
  });

  it('stores run events as one row per batch, never per event', async () => {
    const runId = randomUUID();
    const batch = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, i) => ({
        event_type: 'text' as const, timestamp: '2030-01-01T00:00:00.000Z', session_id: 's', run_id: runId, seq: from + i, content: 'x', is_final: false,
      }));
    for (let b = 0; b < 10; b++) await store.events.appendBatch(runId, batch(b * 100 + 1, b * 100 + 100));
    await store.events.appendBatch(runId, batch(950, 1_010));
    const rows = await ds.query('SELECT seq_from AS seqFrom, seq_to AS seqTo FROM run_events WHERE run_id = ? ORDER BY seq_from', [runId]);
    expect(rows).toHaveLength(11);
    expect(rows.at(-1)).toEqual({ seqFrom: 1_001, seqTo: 1_010 });
  });

  it('stores times in UTC with millisecond precision', async () => {
    const at = new Date('2031-06-15T23:59:58.123Z');
    const timed = new MysqlConversationStore(ds, () => at);
    const session = await timed.sessions.create({ tenantId: 't', userId: 'u', assistantId: 'a' });
    const [row] = await ds.query(
      "SELECT DATE_FORMAT(created_at, '%Y-%m-%d %H:%i:%s.%f') AS stored FROM sessions WHERE session_id = ?",
      [session.sessionId],
    );
    expect(row.stored).toBe('2031-06-15 23:59:58.123000');
    expect((await store.sessions.get(session.sessionId))?.createdAt).toEqual(at);
  });

  it('never recalls an expired note, and deletes it at the first recall ten minutes after the last purge', async () => {
    const DAY = 86_400_000;
    let now = Date.parse('2032-01-01T00:00:00.000Z');
    const timed = new MysqlConversationStore(ds, () => new Date(now));
    const owner = { tenantId: `t-${randomUUID().slice(0, 8)}`, userId: 'u' };
    const stored = async () => Number((await ds.query('SELECT COUNT(*) AS n FROM memories WHERE tenant_id = ?', [owner.tenantId]))[0].n);
    await timed.memories.add(owner, 'a', 'expires soon');
    now += 90 * DAY - 60_000;
    expect((await timed.memories.recall(owner, 'a', 10)).map((n) => n.text)).toEqual(['expires soon']);
    now += 2 * 60_000; // past the retention now, two minutes after that recall purged
    expect(await timed.memories.recall(owner, 'a', 10)).toEqual([]);
    expect(await stored()).toBe(1); // hidden until the owner's next purge is due: that recall cost no DELETE
    now += 10 * 60_000;
    expect(await timed.memories.recall(owner, 'a', 10)).toEqual([]);
    expect(await stored()).toBe(0);
  });

  it('answers ping until closed', async () => {
    expect(await store.ping()).toBe(true);
    await store.close();
    expect(await store.ping()).toBe(false);
  });
});

describe('MCP server secrets at rest', () => {
  let ds: DataSource;
  const cipher = new SecretCipher(randomBytes(32));
  const token = `Bearer tok-${randomUUID()}`;
  const apiKey = `key-${randomUUID()}`;
  const server = (name: string): McpServerConfig => ({ name, transport: 'stdio', command: 'mcp-tool', env: { API_KEY: apiKey, SAME: apiKey } });

  beforeEach(async () => {
    ds = await openDatabase(db);
  });

  afterEach(async () => {
    await ds.destroy();
  });

  const rawConfig = async (tenant: string, user: string, name: string): Promise<string> => {
    const [row] = await ds.query('SELECT CAST(config AS CHAR) AS config FROM mcp_servers WHERE tenant_id = ? AND user_id = ? AND name = ?', [tenant, user, name]);
    return String(row.config);
  };

  it('keeps env and header values encrypted in the row', async () => {
    const tenant = `t-${randomUUID()}`;
    const store = new MysqlConversationStore(ds, undefined, cipher);
    await store.mcpServers.create(tenant, 'alice', server('tools'));
    await store.mcpServers.create(tenant, 'alice', { name: 'remote', transport: 'sse', url: 'https://mcp.example/sse', headers: { Authorization: token } });
    const stored = JSON.parse(await rawConfig(tenant, 'alice', 'tools')) as McpServerConfig;
    expect(JSON.stringify(stored)).not.toContain(apiKey);
    expect(stored.env!.API_KEY).toMatch(/^v1\./);
    expect(stored.env!.API_KEY).not.toBe(stored.env!.SAME);
    expect(stored.command).toBe('mcp-tool');
    expect(await rawConfig(tenant, 'alice', 'remote')).not.toContain(token.slice(7));
    expect((await store.mcpServers.get(tenant, 'alice', 'remote'))?.config.headers).toEqual({ Authorization: token });
  });

  it('names the values another key, no key or a copied value cannot open, and still lists the server', async () => {
    const tenant = `t-${randomUUID()}`;
    await new MysqlConversationStore(ds, undefined, cipher).mcpServers.create(tenant, 'alice', server('tools'));
    for (const other of [new MysqlConversationStore(ds, undefined, new SecretCipher(randomBytes(32))), new MysqlConversationStore(ds)]) {
      const [listed] = await other.mcpServers.list(tenant, 'alice');
      expect(listed).toMatchObject({ config: { name: 'tools', command: 'mcp-tool', env: { API_KEY: '', SAME: '' } }, unreadableSecrets: ['env.API_KEY', 'env.SAME'] });
    }
    // Alice's sealed value pasted into Bob's row (a database write) does not open there.
    const store = new MysqlConversationStore(ds, undefined, cipher);
    await store.mcpServers.create(tenant, 'bob', { ...server('tools'), env: { API_KEY: 'bobs own key' } });
    const alices = JSON.parse(await rawConfig(tenant, 'alice', 'tools')) as McpServerConfig;
    await ds.query("UPDATE mcp_servers SET config = JSON_SET(config, '$.env.API_KEY', ?) WHERE tenant_id = ? AND user_id = 'bob'", [alices.env!.API_KEY, tenant]);
    expect(await store.mcpServers.get(tenant, 'bob', 'tools')).toMatchObject({ config: { env: { API_KEY: '' } }, unreadableSecrets: ['env.API_KEY'] });
    expect((await store.mcpServers.get(tenant, 'alice', 'tools'))?.unreadableSecrets).toBeUndefined();
  });
});

describe('openDatabase', () => {
  it('waits for a database that starts listening late', async () => {
    // A TCP relay that only appears after a while stands in for a server still starting.
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const relay = net.createServer((client) => {
      const upstream = net.connect(db.port, db.host);
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    const retries: number[] = [];
    const opening = openDatabase({ ...db, port }, { retryForMs: 10_000, onRetry: (_e, attempt) => retries.push(attempt) });
    // The relay appears only after the first attempt was refused and retried.
    await waitUntil(() => retries.length > 0, 5_000);
    await new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve));
    try {
      const ds = await opening;
      expect(await ds.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      await ds.destroy();
      expect(retries.length).toBeGreaterThan(0);
    } finally {
      await new Promise((resolve) => relay.close(resolve));
    }
  });

  it('gives up after the retry window with a message naming the server', async () => {
    const config = { ...db, port: 1 };
    const error = await openDatabase(config, { retryForMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect((error as Error).message).toContain(`${db.host}:1`);
    expect((error as Error).message).toMatch(/DATAAGENT_MYSQL_HOST/);
  });

  it('fails at once on wrong credentials', async () => {
    let retries = 0;
    const error = await openDatabase({ ...db, password: 'wrong' }, { retryForMs: 20_000, onRetry: () => retries++ }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect((error as Error).message).toMatch(/ER_ACCESS_DENIED_ERROR.*DATAAGENT_MYSQL_PASSWORD/s);
    expect(retries).toBe(0);
  });

  it('builds a data source without connecting', () => {
    expect(createDataSource(db).isInitialized).toBe(false);
  });
});

describe('createConversationStore', () => {
  it('returns the memory store or a migrated MySQL store', async () => {
    const memory = await createConversationStore('memory', db);
    expect(memory).toBeInstanceOf(MemoryConversationStore);
    const mysql = await createConversationStore('mysql', db);
    try {
      expect(mysql).toBeInstanceOf(MysqlConversationStore);
      expect(await mysql.ping()).toBe(true);
    } finally {
      await mysql.close();
    }
  });
});
