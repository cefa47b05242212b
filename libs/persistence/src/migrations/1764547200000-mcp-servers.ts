import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Identifiers compare byte for byte (see entities/column-types.ts). */
const ID = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';

/** mcp_servers: users' own MCP servers (REST /users/{user_id}/mcp-servers), one row per name. */
export class McpServers1764547200000 implements MigrationInterface {
  name = 'McpServers1764547200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE \`mcp_servers\` (
        \`id\` bigint unsigned NOT NULL AUTO_INCREMENT,
        \`tenant_id\` varchar(128) ${ID} NOT NULL,
        \`user_id\` varchar(128) ${ID} NOT NULL,
        \`name\` varchar(64) ${ID} NOT NULL,
        \`config\` json NOT NULL,
        \`created_at\` datetime(3) NOT NULL,
        \`updated_at\` datetime(3) NOT NULL,
        PRIMARY KEY (\`id\`),
        UNIQUE KEY \`uq_mcp_servers_user_name\` (\`tenant_id\`, \`user_id\`, \`name\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS `mcp_servers`');
  }
}
