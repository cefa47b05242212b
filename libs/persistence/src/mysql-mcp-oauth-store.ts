import type { DataSource } from 'typeorm';
import type { McpOAuthGrant, McpOAuthOwner, McpOAuthStore, StoredMcpOAuthGrant } from '#core/mcp/mcp-oauth-store.js';
import { SecretKeyRequiredError } from '#core/mcp/mcp-secrets.js';
import { SecretUnreadableError, type SecretCipher } from '#core/secrets/secret-cipher.js';

interface GrantRow {
  sealed_grant: string | null;
  version: number;
  updated_at: Date;
}

/**
 * People's sign-ins to MCP servers in MySQL, each grant sealed whole with DATAAGENT_SECRET_KEY
 * and bound to its owner and server. Writes are fenced by version in one statement; a sign-out
 * keeps the row (and its version) with no grant.
 */
export class MysqlMcpOAuthStore implements McpOAuthStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly now: () => Date,
    private readonly cipher?: SecretCipher,
  ) {}

  async get(owner: McpOAuthOwner, server: string): Promise<StoredMcpOAuthGrant | null> {
    const rows = (await this.dataSource.query('SELECT sealed_grant, version, updated_at FROM mcp_oauth_grants WHERE tenant_id = ? AND user_id = ? AND server_name = ?', [
      owner.tenantId,
      owner.userId,
      server,
    ])) as GrantRow[];
    const row = rows[0];
    if (!row?.sealed_grant) return null;
    try {
      if (!this.cipher) throw new SecretUnreadableError('other_key');
      const grant = JSON.parse(this.cipher.open(row.sealed_grant, context(owner, server))) as McpOAuthGrant;
      return { grant, version: Number(row.version), updatedAt: new Date(row.updated_at) };
    } catch (err) {
      // A grant this key cannot open is no sign-in: the person signs in again.
      if (err instanceof SecretUnreadableError) return null;
      throw err;
    }
  }

  async put(owner: McpOAuthOwner, server: string, grant: McpOAuthGrant, expectedVersion: number): Promise<number | null> {
    if (!this.cipher) throw new SecretKeyRequiredError(['oauth tokens']);
    const sealed = this.cipher.seal(JSON.stringify(grant), context(owner, server));
    const at = this.now();
    const key = [owner.tenantId, owner.userId, server];
    if (expectedVersion === 0) {
      // A sign-in after a sign-out takes the row that holds no grant; a first one inserts it.
      // (Matched rows count as affected here: the WHERE clause alone decides.)
      const reused = (await this.dataSource.query(
        'UPDATE mcp_oauth_grants SET sealed_grant = ?, version = version + 1, updated_at = ? WHERE tenant_id = ? AND user_id = ? AND server_name = ? AND sealed_grant IS NULL',
        [sealed, at, ...key],
      )) as { affectedRows: number };
      if (reused.affectedRows === 0) {
        const inserted = (await this.dataSource.query(
          'INSERT IGNORE INTO mcp_oauth_grants (tenant_id, user_id, server_name, sealed_grant, version, updated_at) VALUES (?, ?, ?, ?, 1, ?)',
          [...key, sealed, at],
        )) as { affectedRows: number };
        if (inserted.affectedRows === 0) return null;
      }
    } else {
      const updated = (await this.dataSource.query(
        'UPDATE mcp_oauth_grants SET sealed_grant = ?, version = version + 1, updated_at = ? WHERE tenant_id = ? AND user_id = ? AND server_name = ? AND version = ? AND sealed_grant IS NOT NULL',
        [sealed, at, ...key, expectedVersion],
      )) as { affectedRows: number };
      if (updated.affectedRows === 0) return null;
    }
    const rows = (await this.dataSource.query('SELECT version FROM mcp_oauth_grants WHERE tenant_id = ? AND user_id = ? AND server_name = ?', key)) as Array<{ version: number }>;
    return Number(rows[0]!.version);
  }

  async delete(owner: McpOAuthOwner, server: string): Promise<boolean> {
    const result = (await this.dataSource.query(
      'UPDATE mcp_oauth_grants SET sealed_grant = NULL, version = version + 1, updated_at = ? WHERE tenant_id = ? AND user_id = ? AND server_name = ? AND sealed_grant IS NOT NULL',
      [this.now(), owner.tenantId, owner.userId, server],
    )) as { affectedRows: number };
    return result.affectedRows > 0;
  }
}

function context(owner: McpOAuthOwner, server: string): string {
  return JSON.stringify(['mcp-oauth-grant', owner.tenantId, owner.userId, server]);
}
