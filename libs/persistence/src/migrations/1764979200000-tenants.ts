import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Identifiers compare byte for byte (see entities/column-types.ts). */
const ID = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';

/** tenants: each tenant's limits and feature switches; NULL limits take the deployment's defaults. */
export class Tenants1764979200000 implements MigrationInterface {
  name = 'Tenants1764979200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE \`tenants\` (
        \`tenant_id\` varchar(128) ${ID} NOT NULL,
        \`name\` varchar(200) NOT NULL,
        \`max_users\` int NULL,
        \`max_sessions_per_user\` int NULL,
        \`max_mcp_servers\` int NULL,
        \`workspace_quota\` bigint NULL,
        \`max_concurrent_runs\` int NULL,
        \`requests_per_minute\` int NULL,
        \`features_enabled\` json NOT NULL,
        \`created_at\` datetime(3) NOT NULL,
        \`updated_at\` datetime(3) NOT NULL,
        PRIMARY KEY (\`tenant_id\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS `tenants`');
  }
}
