import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Identifiers compare byte for byte (see entities/column-types.ts). */
const ID = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';

/** mcp_tools: each MCP server's tool catalog, one row per tool, written by the workers. */
export class McpTools1764633600000 implements MigrationInterface {
  name = 'McpTools1764633600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE \`mcp_tools\` (
        \`id\` bigint unsigned NOT NULL AUTO_INCREMENT,
        \`tenant_id\` varchar(128) ${ID} NOT NULL,
        \`user_id\` varchar(128) ${ID} NOT NULL,
        \`server_name\` varchar(64) ${ID} NOT NULL,
        \`tool_name\` varchar(128) ${ID} NOT NULL,
        \`description\` text NOT NULL,
        \`input_schema\` json NOT NULL,
        \`output_schema\` json NULL,
        \`annotations\` json NULL,
        \`schema_version\` varchar(32) ${ID} NOT NULL,
        \`catalog_version\` varchar(32) ${ID} NOT NULL,
        \`catalog_partial\` tinyint NOT NULL DEFAULT 0,
        \`updated_at\` datetime(3) NOT NULL,
        PRIMARY KEY (\`id\`),
        UNIQUE KEY \`uq_mcp_tools_server_tool\` (\`tenant_id\`, \`user_id\`, \`server_name\`, \`tool_name\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS `mcp_tools`');
  }
}
