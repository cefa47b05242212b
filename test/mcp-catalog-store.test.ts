import type { DataSource } from 'typeorm';
import type { McpCatalogTool } from '#core/mcp/mcp-catalog-store.js';
import { openDatabase } from '#persistence/data-source.js';
import { MysqlMcpCatalogStore } from '#persistence/mysql-mcp-catalog-store.js';
import { createTestDatabase, dropTestDatabase, type TestDatabase } from './support/databases.js';

const tools = (server: string): McpCatalogTool[] =>
  ['echo', 'add', 'wait'].map((name) => ({ name: `${server}.${name}`, description: name, inputSchema: { type: 'object', properties: {} } }));

/**
 * `mcp_tools` on MariaDB: a worker stores each server's catalog as it connects, and many connect
 * at once. Saves of different users' servers lock neighbouring index ranges and can deadlock;
 * each must still land.
 */
describe('the MySQL MCP catalog store', () => {
  let db: TestDatabase;
  let ds: DataSource;
  beforeAll(async () => {
    db = await createTestDatabase('catalog');
    ds = await openDatabase(db);
  });
  afterAll(async () => {
    await ds?.destroy();
    if (db) await dropTestDatabase(db.database);
  });

  it('stores every catalog saved at once, for many users and servers, and each only once', async () => {
    const store = new MysqlMcpCatalogStore(ds, () => new Date());
    const owners = Array.from({ length: 12 }, (_, i) => ({ tenantId: 'acme', userId: `user-${i}` }));
    const servers = ['mine', 'shared', 'tracker'];
    for (let round = 0; round < 3; round++) {
      const version = `v${round}`;
      const saved = await Promise.all(owners.flatMap((owner) => servers.map((server) => store.save(owner, server, { version, partial: false, tools: tools(server) }))));
      expect(saved.every((s) => s === true)).toBe(true);
      const stored = await Promise.all(owners.flatMap((owner) => servers.map((server) => store.get(owner, server))));
      expect(stored.map((c) => c?.version)).toEqual(stored.map(() => version));
      expect(stored.every((c) => c?.tools.length === 3)).toBe(true);
    }
    // An unchanged catalog is not written again.
    expect(await store.save(owners[0]!, 'mine', { version: 'v2', partial: false, tools: tools('mine') })).toBe(false);
  });
});
