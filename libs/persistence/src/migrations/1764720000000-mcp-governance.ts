import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Identifiers compare byte for byte (see entities/column-types.ts). */
const ID = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';

/** mcp_tool_bindings (allowlists per assistant or API key) and mcp_tool_call_log (the audit of every MCP call). */
export class McpGovernance1764720000000 implements MigrationInterface {
  name = 'McpGovernance1764720000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE \`mcp_tool_bindings\` (
        \`binding_id\` varchar(36) ${ID} NOT NULL,
        \`tenant_id\` varchar(128) ${ID} NOT NULL,
        \`agent_id\` varchar(128) ${ID} NULL,
        \`api_key_id\` varchar(128) ${ID} NULL,
        \`tools\` json NOT NULL,
        \`created_at\` datetime(3) NOT NULL,
        PRIMARY KEY (\`binding_id\`),
        KEY \`idx_mcp_tool_bindings_tenant\` (\`tenant_id\`, \`created_at\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    await queryRunner.query(`
      CREATE TABLE \`mcp_tool_call_log\` (
        \`call_id\` varchar(36) ${ID} NOT NULL,
        \`trace_id\` varchar(32) ${ID} NOT NULL,
        \`tenant_id\` varchar(128) ${ID} NOT NULL,
        \`user_id\` varchar(128) ${ID} NOT NULL,
        \`session_id\` varchar(64) ${ID} NOT NULL,
        \`run_id\` varchar(64) ${ID} NOT NULL,
        \`agent_id\` varchar(128) ${ID} NOT NULL,
        \`api_key_id\` varchar(128) ${ID} NULL,
        \`server_id\` varchar(64) ${ID} NOT NULL,
        \`tool_name\` varchar(200) ${ID} NOT NULL,
        \`tool_call_id\` varchar(128) ${ID} NOT NULL,
        \`schema_version\` varchar(32) ${ID} NOT NULL,
        \`validation\` varchar(16) NOT NULL,
        \`status\` varchar(16) NOT NULL,
        \`error\` text NULL,
        \`started_at\` datetime(3) NOT NULL,
        \`ended_at\` datetime(3) NOT NULL,
        \`duration_ms\` int unsigned NOT NULL,
        \`args_bytes\` int unsigned NOT NULL,
        \`args_sha256\` char(64) NOT NULL,
        \`result_bytes\` int unsigned NOT NULL,
        \`result_sha256\` char(64) NOT NULL,
        \`args\` json NULL,
        \`result\` json NULL,
        PRIMARY KEY (\`call_id\`),
        KEY \`idx_mcp_tool_call_log_tenant\` (\`tenant_id\`, \`started_at\`),
        KEY \`idx_mcp_tool_call_log_session\` (\`session_id\`, \`started_at\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS `mcp_tool_call_log`');
    await queryRunner.query('DROP TABLE IF EXISTS `mcp_tool_bindings`');
  }
}
