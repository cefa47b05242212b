import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { MemoryMcpOAuthStore, type McpOAuthGrant, type McpOAuthStore } from '#core/mcp/mcp-oauth-store.js';
import { SecretCipher } from '#core/secrets/secret-cipher.js';
import { openDatabase } from '#persistence/data-source.js';
import { MysqlMcpOAuthStore } from '#persistence/mysql-mcp-oauth-store.js';
import { createTestDatabase, dropTestDatabase, type TestDatabase } from './support/databases.js';

const alice = { tenantId: 'acme', userId: 'alice' };
const bob = { tenantId: 'acme', userId: 'bob' };
const grant = (token: string): McpOAuthGrant => ({
  discovery: { authorizationServerUrl: 'https://auth.example.test' },
  client: { client_id: 'dataagent', client_secret: 'client-secret' },
  tokens: { access_token: token, token_type: 'Bearer', refresh_token: `refresh-${token}` },
  expiresAt: 1_900_000_000_000,
});

/** What every sign-in store does: fenced writes, versions that outlive a sign-out, one row per person and server. */
function oauthStoreContract(open: () => Promise<McpOAuthStore>) {
  it('writes over the version read, and refuses a write over another', async () => {
    const store = await open();
    expect(await store.get(alice, 'linear')).toBeNull();
    const v1 = await store.put(alice, 'linear', grant('a1'), 0);
    expect(v1).toEqual(expect.any(Number));
    expect(await store.put(alice, 'linear', grant('again'), 0)).toBeNull();
    const v2 = await store.put(alice, 'linear', grant('a2'), v1!);
    expect(v2).toBeGreaterThan(v1!);
    expect(await store.put(alice, 'linear', grant('stale'), v1!)).toBeNull();
    expect(await store.get(alice, 'linear')).toMatchObject({ version: v2, grant: grant('a2') });
  });

  it('keeps each person and server apart', async () => {
    const store = await open();
    await store.put(alice, 'github', grant('alice-token'), 0);
    expect(await store.get(bob, 'github')).toBeNull();
    expect(await store.get(alice, 'other')).toBeNull();
  });

  it('after a sign-out, a refresh that read the old grant cannot write over the next sign-in', async () => {
    const store = await open();
    const v1 = (await store.put(alice, 'notion', grant('old'), 0))!;
    expect(await store.delete(alice, 'notion')).toBe(true);
    expect(await store.delete(alice, 'notion')).toBe(false);
    expect(await store.get(alice, 'notion')).toBeNull();
    const v3 = await store.put(alice, 'notion', grant('new'), 0);
    expect(v3).toBeGreaterThan(v1 + 1);
    expect(await store.put(alice, 'notion', grant('stale refresh'), v1)).toBeNull();
    expect((await store.get(alice, 'notion'))?.grant.tokens.access_token).toBe('new');
  });
}

describe('MemoryMcpOAuthStore', () => {
  oauthStoreContract(async () => new MemoryMcpOAuthStore());
});

describe('MysqlMcpOAuthStore', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const cipher = new SecretCipher(randomBytes(32));
  beforeAll(async () => {
    db = await createTestDatabase('oauth');
    ds = await openDatabase(db);
  });
  afterAll(async () => {
    await ds?.destroy();
    if (db) await dropTestDatabase(db.database);
  });

  oauthStoreContract(async () => {
    await ds.query('DELETE FROM mcp_oauth_grants');
    return new MysqlMcpOAuthStore(ds, () => new Date(), cipher);
  });

  it('stores tokens and client secrets only sealed, bound to their owner', async () => {
    await ds.query('DELETE FROM mcp_oauth_grants');
    const store = new MysqlMcpOAuthStore(ds, () => new Date(), cipher);
    await store.put(alice, 'linear', grant('very-secret-access-token'), 0);
    const [row] = (await ds.query('SELECT sealed_grant FROM mcp_oauth_grants')) as Array<{ sealed_grant: string }>;
    expect(row!.sealed_grant).not.toMatch(/very-secret|refresh-|client-secret/);
    // A sealed grant copied to another person's row does not open there.
    await ds.query("INSERT INTO mcp_oauth_grants (tenant_id, user_id, server_name, sealed_grant, version, updated_at) VALUES ('acme', 'bob', 'linear', ?, 1, NOW(3))", [row!.sealed_grant]);
    expect(await store.get(bob, 'linear')).toBeNull();
    // Another key opens nothing: the person signs in again.
    expect(await new MysqlMcpOAuthStore(ds, () => new Date(), new SecretCipher(randomBytes(32))).get(alice, 'linear')).toBeNull();
  });
});
