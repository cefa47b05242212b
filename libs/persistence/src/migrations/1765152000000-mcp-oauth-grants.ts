import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Identifiers compare byte for byte (see entities/column-types.ts). */
const ID = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';

/**
 * mcp_oauth_grants: people's sign-ins to OAuth-protected MCP servers, one row per person and
 * server. `sealed_grant` is the grant (tokens, client, discovery) encrypted with
 * DATAAGENT_SECRET_KEY; NULL after a sign-out. `version` only grows: refreshes write over the
 * version they read.
 */
export class McpOAuthGrants1765152000000 implements MigrationInterface {
  name = 'McpOAuthGrants1765152000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE \`mcp_oauth_grants\` (
        \`id\` bigint unsigned NOT NULL AUTO_INCREMENT,
        \`tenant_id\` varchar(128) ${ID} NOT NULL,
        \`user_id\` varchar(128) ${ID} NOT NULL,
        \`server_name\` varchar(64) ${ID} NOT NULL,
        \`sealed_grant\` mediumtext NULL,
        \`version\` int unsigned NOT NULL,
        \`updated_at\` datetime(3) NOT NULL,
        PRIMARY KEY (\`id\`),
        UNIQUE KEY \`uq_mcp_oauth_grants_owner_server\` (\`tenant_id\`, \`user_id\`, \`server_name\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS `mcp_oauth_grants`');
  }
}
